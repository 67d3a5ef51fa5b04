import { fileURLToPath } from 'node:url';
import { TemporalFailure } from '@temporalio/common';
import { causeChain } from '../../src/shared/errors.js';

/** This checkout's absolute path, and the test's working directory: a failure naming either names the worker's files. */
export const MACHINE_PATHS = [
  ...new Set([fileURLToPath(new URL('../..', import.meta.url)).replace(/[\\/]+$/, ''), process.cwd()]),
];

/**
 * What the failures in an error's cause chain brought from the server: the stack trace and the failure as Temporal
 * delivered it. The client's own errors are left out: their stacks are this process's, made on this machine.
 */
export function deliveredFailureText(error: unknown): string {
  return [...causeChain(error)]
    .filter((cause): cause is TemporalFailure => cause instanceof TemporalFailure && cause.failure !== undefined)
    .map((failure) => `${failure.stack ?? ''}\n${JSON.stringify(failure.failure)}`)
    .join('\n');
}

/** The machine paths that `text` contains (none, for text that may reach a client or a history). */
export function machinePathsIn(text: string): string[] {
  return MACHINE_PATHS.filter((machinePath) => text.includes(machinePath));
}
