/**
 * The part of Express (a dependency of the MCP SDK's server auth helpers, which ships no types of its own here) that
 * the tests use to mount those helpers.
 */
declare module 'express' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type NextFunction = (error?: unknown) => void;
  export type RequestHandler = (request: IncomingMessage, response: ServerResponse, next: NextFunction) => void;
  export type Router = RequestHandler;
  export interface Express extends RequestHandler {
    use(...handlers: Array<string | RequestHandler>): Express;
  }
  export default function express(): Express;
}
