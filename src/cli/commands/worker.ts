import { Command } from '@commander-js/extra-typings';

// Placeholder until the command is implemented.
export function workerCommand() {
  return new Command('worker').description('(not implemented yet)');
}
