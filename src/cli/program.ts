import { Command, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { approvalsCommand } from './commands/approvals.js';
import { askCommand } from './commands/ask.js';
import { chatCommand } from './commands/chat.js';
import { approveCommand, denyCommand } from './commands/decide.js';
import { deploymentsCommand } from './commands/deployments.js';
import { endCommand } from './commands/end.js';
import { historyCommand } from './commands/history.js';
import { answerCommand, inputsCommand } from './commands/inputs.js';
import { interruptCommand } from './commands/interrupt.js';
import { listCommand } from './commands/list.js';
import { scheduleCommand } from './commands/schedule.js';
import { sendCommand } from './commands/send.js';
import { serveCommand } from './commands/serve.js';
import { startCommand } from './commands/start.js';
import { tokenCommand } from './commands/token.js';
import { spendCommand } from './commands/spend.js';
import { packageVersion } from '../node/package-version.js';

/**
 * Commands that load the worker (the Temporal worker runtime, the MCP SDK, openai) are registered lazily: only the one
 * being run is imported; the others appear in the help by name and summary. So `durable-agent --help` and the
 * conversation commands start without loading the worker.
 */
const heavyCommands: { name: string; summary: string; load: () => Promise<CommandUnknownOpts> }[] = [
  {
    name: 'dev',
    summary: 'run the worker, with an embedded Temporal dev server unless TEMPORAL_ADDRESS is set',
    load: async () => (await import('./commands/dev.js')).devCommand(),
  },
  {
    name: 'worker',
    summary: 'run only the worker, against the cluster at TEMPORAL_ADDRESS',
    load: async () => (await import('./commands/worker.js')).workerCommand(),
  },
  {
    name: 'codec-server',
    summary: "serve Temporal's remote codec protocol with the encryption keys, for the Web UI",
    load: async () => (await import('./commands/codec-server.js')).codecServerCommand(),
  },
  {
    name: 'provision',
    summary: 'build or fetch both Temporal servers into the cache',
    load: async () => (await import('./commands/provision.js')).provisionCommand(),
  },
  {
    name: 'replay',
    summary: "replay conversations' histories on this version: the check before a deploy",
    load: async () => (await import('./commands/replay.js')).replayCommand(),
  },
  {
    name: 'mcp',
    summary: "manage the worker's MCP servers: `mcp login SERVER` authorizes one with OAuth",
    load: async () => (await import('./commands/mcp.js')).mcpCommand(),
  },
  {
    name: 'scripted-model',
    summary: 'serve a script of model answers as an OpenAI-compatible API, for tests',
    load: async () => (await import('./commands/scripted-model.js')).scriptedModelCommand(),
  },
];

/**
 * The `durable-agent` program with every command registered; `argv` (as `process.argv`) names the one heavy command
 * to load for real.
 */
export async function buildProgram(argv: readonly string[]): Promise<Command> {
  const program = new Command()
    .name('durable-agent')
    .description('Durable LLM agents on Temporal: every model call and MCP tool call is a retriable activity.')
    .version(packageVersion())
    .showHelpAfterError('(run with --help for usage)');

  // `durable-agent <name> …` and `durable-agent help <name>` both need the real command.
  const words = argv.slice(2).filter((word) => !word.startsWith('-'));
  const requested = words[0] === 'help' ? words[1] : words[0];
  for (const entry of heavyCommands) {
    program.addCommand(entry.name === requested ? await entry.load() : new Command(entry.name).summary(entry.summary));
  }
  for (const command of [
    startCommand(),
    sendCommand(),
    askCommand(),
    chatCommand(),
    historyCommand(),
    listCommand(),
    spendCommand(),
    interruptCommand(),
    inputsCommand(),
    answerCommand(),
    endCommand(),
    approvalsCommand(),
    approveCommand(),
    denyCommand(),
    deploymentsCommand(),
    scheduleCommand(),
    serveCommand(),
    tokenCommand(),
  ]) {
    program.addCommand(command);
  }
  // Usage errors (unknown option, missing argument) exit with ExitCode.Usage instead of commander's 1.
  for (const command of [program, ...program.commands]) command.exitOverride();
  return program;
}
