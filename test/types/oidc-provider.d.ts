/** The parts of oidc-provider (which ships no types) that the tests use. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface ClientLike {
    grantTypeAllowed(grant: string): boolean;
  }
  interface GrantLike {
    addOIDCScope(scope: string): void;
    addResourceScope(indicator: string, scope: string): void;
    save(): Promise<string>;
  }
  interface InteractionDetails {
    prompt: { name: string; details: unknown };
    params: Record<string, unknown>;
    session?: { accountId: string };
    grantId?: string;
  }
  type Callback = (request: IncomingMessage, response: ServerResponse) => Promise<void> | void;
  /** The Koa context of a request, as far as the tests read and change it. */
  interface KoaContext {
    body: unknown;
    get(header: string): string;
    oidc?: { params?: Record<string, unknown> };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): Callback;
    /** A Koa middleware around every route's own (so after `next()` an error is already the JSON body). */
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): this;
    on(event: string, listener: (...args: never[]) => void): this;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<InteractionDetails>;
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
    Grant: {
      new (properties: { accountId: string; clientId: string }): GrantLike;
      find(id: string): Promise<GrantLike | undefined>;
    };
  }
  export const errors: { InvalidTarget: new (description?: string) => Error };
  export type { ClientLike, KoaContext };
}
