#!/usr/bin/env node
import { CommanderError } from '@commander-js/extra-typings';
import { ExitCode } from '../shared/exit-codes.js';
import { reportError } from './output.js';
import { buildProgram } from './program.js';

async function main(): Promise<void> {
  const program = await buildProgram(process.argv);
  try {
    await program.parseAsync(process.argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Commander has printed the message (or the help) already.
      process.exitCode = error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
      return;
    }
    throw error;
  }
}

main().catch((error: unknown) => {
  process.exitCode = reportError(error);
});
