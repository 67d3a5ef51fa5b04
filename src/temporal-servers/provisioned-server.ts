/** The two Temporal servers durable-agent provisions, as progress lines and errors name them. */
export type ServerKind = 'dev server' | 'test server';

/** The outcome of resolving a server binary. */
export type ProvisionedServer =
  | {
      kind: 'path';
      /** Absolute path of the executable. */
      path: string;
      /** Where it came from: an env var, the cache, or a build that just finished. */
      source: 'environment' | 'cache' | 'built';
    }
  | {
      /** Nothing local can provide it: let @temporalio/testing download its default (needs internet access). */
      kind: 'sdk-download';
      /** Why no local binary exists, with what to install; shown if the SDK's download fails too. */
      reason: string;
    };
