import { Command } from '@commander-js/extra-typings';
import { describe, expect, it } from 'vitest';
import { askCommand } from '../../src/cli/commands/ask.js';
import { chatCommand } from '../../src/cli/commands/chat.js';
import { sendCommand } from '../../src/cli/commands/send.js';
import { startCommand } from '../../src/cli/commands/start.js';
import { addSettingsOptions, settingsFrom } from '../../src/cli/settings-options.js';

/** Parses `args` as a command with only the settings options would, and returns the settings they ask for. */
function settingsOf(...args: string[]) {
  const command = addSettingsOptions(new Command('test'))
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
  command.parse(args, { from: 'user' });
  return settingsFrom(command.opts());
}

describe('CLI settings options', () => {
  it('settings: every command that may create a conversation takes the same four settings options', () => {
    for (const command of [startCommand(), sendCommand(), askCommand(), chatCommand()]) {
      const flags = command.options.map((option) => option.long);
      expect(flags, command.name()).toEqual(
        expect.arrayContaining(['--model', '--system-prompt', '--idle-timeout', '--settings']),
      );
    }
  });

  it('settings: no flags ask for no settings, so a running conversation keeps its own', () => {
    expect(settingsOf()).toBeUndefined();
  });

  it('settings: the named flags become ConversationSettings and win over the same keys in --settings', () => {
    expect(
      settingsOf(
        '--settings',
        '{"model": "from-json", "maxTurnsPerRun": 5}',
        '--model',
        'from-flag',
        '--system-prompt',
        'Be brief.',
        '--idle-timeout',
        '1.5',
      ),
    ).toEqual({ model: 'from-flag', systemPrompt: 'Be brief.', idleTimeoutMs: 1500, maxTurnsPerRun: 5 });
  });

  it('settings: --settings must be a JSON object and --idle-timeout a positive number (usage errors)', () => {
    expect(() => settingsOf('--settings', '[1, 2]')).toThrow(/expected a JSON object/);
    expect(() => settingsOf('--settings', 'not json')).toThrow(/expected a JSON object/);
    expect(() => settingsOf('--idle-timeout', '0')).toThrow(/expected a positive number/);
  });
});
