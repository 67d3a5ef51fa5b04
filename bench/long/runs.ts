import { readFiles } from './read-files.js';
import type { LongRun } from './run.js';

/**
 * The runs of `npm run bench -- --long`, in order. To add one: a file of bench/long exporting a `LongRun` (see
 * ./read-files.ts), and its line here.
 */
export const LONG_RUNS: readonly LongRun[] = [readFiles];
