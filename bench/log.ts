/** The benchmark's progress lines go to stderr, so that a quick run's tables on stdout can be piped on their own. */
export function log(line: string): void {
  process.stderr.write(`[bench] ${line}\n`);
}
