import { Command } from '@commander-js/extra-typings';

// Placeholder until the command is implemented.
export function devCommand() {
  return new Command('dev').description('(not implemented yet)');
}
