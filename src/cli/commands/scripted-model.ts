import { Command } from '@commander-js/extra-typings';

// Placeholder until the command is implemented.
export function scriptedModelCommand() {
  return new Command('scripted-model').description('(not implemented yet)');
}
