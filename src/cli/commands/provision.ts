import { Command } from '@commander-js/extra-typings';

// Placeholder until the command is implemented.
export function provisionCommand() {
  return new Command('provision').description('(not implemented yet)');
}
