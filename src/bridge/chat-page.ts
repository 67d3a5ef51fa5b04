import { readFileSync } from 'node:fs';
import type { Hono } from 'hono';
import { DurableAgentError } from '../shared/errors.js';

/**
 * The chat page of `durable-agent serve` (docs/streaming.md): plain HTML, one stylesheet and JavaScript modules in
 * `page/`, with no framework and no build step of their own. `npm run build` copies them next to this module in
 * dist/, so the packaged CLI serves the same files the tests open in a browser.
 */

/** The page's files: the URL path, the file in `page/`, its content type. Nothing else is served from there. */
const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/chat.css': { file: 'chat.css', type: 'text/css; charset=utf-8' },
  '/chat.js': { file: 'chat.js', type: 'text/javascript; charset=utf-8' },
  '/chat-connection.js': { file: 'chat-connection.js', type: 'text/javascript; charset=utf-8' },
  '/chat-view.js': { file: 'chat-view.js', type: 'text/javascript; charset=utf-8' },
  '/chat-cards.js': { file: 'chat-cards.js', type: 'text/javascript; charset=utf-8' },
  '/chat-dom.js': { file: 'chat-dom.js', type: 'text/javascript; charset=utf-8' },
};

/**
 * The page runs only its own scripts and styles and talks only to its own origin: text a model or a tool wrote is
 * rendered as text (never as HTML), and this policy is the second line should that ever slip.
 */
export const CHAT_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The page's files are not where the build puts them. */
export class ChatPageMissingError extends DurableAgentError {}

const cache = new Map<string, string>();

/** The text of one of the page's files, read once. */
export function chatPageAsset(file: string): string {
  let text = cache.get(file);
  if (text === undefined) {
    const url = new URL(`./page/${file}`, import.meta.url);
    try {
      text = readFileSync(url, 'utf8');
    } catch (error) {
      throw new ChatPageMissingError(
        `The chat page's file ${file} is missing next to the bridge (${(error as Error).message}): build with ` +
          '`npm run build`, which copies src/bridge/page/ to dist/bridge/page/.',
        { cause: error },
      );
    }
    cache.set(file, text);
  }
  return text;
}

/** Serve the page at `/` and its files beside it. */
export function mountChatPage(app: Hono): void {
  for (const [path, asset] of Object.entries(ASSETS)) {
    app.get(path, (c) =>
      c.body(chatPageAsset(asset.file), 200, {
        'content-type': asset.type,
        'content-security-policy': CHAT_PAGE_CSP,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-cache',
      }),
    );
  }
}
