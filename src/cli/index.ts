#!/usr/bin/env node
import { Command } from '@commander-js/extra-typings';
import { devCommand } from './commands/dev.js';
import { workerCommand } from './commands/worker.js';
import { provisionCommand } from './commands/provision.js';
import { scriptedModelCommand } from './commands/scripted-model.js';
import { packageVersion } from './version.js';
import { reportError } from './output.js';

const program = new Command()
  .name('durable-agent')
  .description('Durable LLM agents on Temporal: every model call and MCP tool call is a retriable activity.')
  .version(packageVersion())
  .showHelpAfterError('(run with --help for usage)')
  .addCommand(devCommand())
  .addCommand(workerCommand())
  .addCommand(provisionCommand())
  .addCommand(scriptedModelCommand());

program.parseAsync(process.argv).catch((error: unknown) => {
  process.exitCode = reportError(error);
});
