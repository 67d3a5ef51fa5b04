/** Resolves with the first SIGINT or SIGTERM, so a command serving in the foreground can close before it exits. */
export function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}
