import { InvalidArgumentError, Option, type Command, type OptionValues } from '@commander-js/extra-typings';
import type { ConversationSettings } from '../workflows/definitions.js';
import { parsePositiveNumber } from './arguments.js';

/**
 * The options that set a new conversation's settings, shared by every command that may create one (start, send, ask,
 * chat). A conversation that is already running keeps its settings and ignores them.
 */
export function addSettingsOptions<Args extends unknown[], Opts extends OptionValues, GlobalOpts extends OptionValues>(
  command: Command<Args, Opts, GlobalOpts>,
) {
  return command
    .addOption(new Option('--model <name>', "model of a new conversation (default: the worker's DURABLE_AGENT_MODEL)"))
    .addOption(new Option('--system-prompt <text>', 'system prompt of a new conversation'))
    .addOption(
      new Option('--idle-timeout <seconds>', 'close the run after this long without a message (it reopens)').argParser(
        parsePositiveNumber,
      ),
    )
    .addOption(
      new Option('--tenant <id>', 'tenant of a new conversation: its fair share and its spend (docs/tenants.md)'),
    )
    .addOption(
      new Option('--settings <json>', 'more ConversationSettings of a new conversation, as JSON').argParser(
        parseSettings,
      ),
    );
}

/** The parsed values of {@link addSettingsOptions}. */
export interface SettingsFlags {
  model?: string;
  systemPrompt?: string;
  idleTimeout?: number;
  tenant?: string;
  settings?: ConversationSettings;
}

/** The settings the flags ask for (the named flags win over the same keys in `--settings`); undefined for none. */
export function settingsFrom(flags: SettingsFlags): ConversationSettings | undefined {
  const settings: ConversationSettings = { ...flags.settings };
  if (flags.model !== undefined) settings.model = flags.model;
  if (flags.systemPrompt !== undefined) settings.systemPrompt = flags.systemPrompt;
  if (flags.idleTimeout !== undefined) settings.idleTimeoutMs = Math.round(flags.idleTimeout * 1000);
  if (flags.tenant !== undefined) settings.tenant = flags.tenant;
  return Object.keys(settings).length > 0 ? settings : undefined;
}

function parseSettings(value: string): ConversationSettings {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected a JSON object such as \'{"maxTurnsPerRun": 50}\'.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidArgumentError('expected a JSON object such as \'{"maxTurnsPerRun": 50}\'.');
  }
  return parsed;
}
