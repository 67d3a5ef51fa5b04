import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { CHAT_PAGE_CSP, mountChatPage } from '../../src/bridge/chat-page.js';

const page = (file: string) => readFileSync(new URL(`../../src/bridge/page/${file}`, import.meta.url), 'utf8');

function app(): Hono {
  const hono = new Hono();
  mountChatPage(hono);
  return hono;
}

describe('the chat page routes of the bridge', () => {
  it('chat page: / is the page, its modules and stylesheet beside it, each with its type and the page policy', async () => {
    const served = app();
    const index = await served.request('/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('content-security-policy')).toBe(CHAT_PAGE_CSP);
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await index.text()).toBe(page('index.html'));
    for (const file of ['chat.js', 'chat-connection.js', 'chat-view.js', 'chat-cards.js', 'chat-dom.js']) {
      const response = await served.request(`/${file}`);
      expect(response.headers.get('content-type'), file).toBe('text/javascript; charset=utf-8');
      expect(await response.text()).toBe(page(file));
    }
    expect((await served.request('/chat.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('chat page: only the page scripts, styles and origin; no inline script, no HTML parsing of text', () => {
    expect(CHAT_PAGE_CSP).toContain("script-src 'self'");
    expect(CHAT_PAGE_CSP).toContain("connect-src 'self'");
    expect(CHAT_PAGE_CSP).toContain("frame-ancestors 'none'");
    expect(page('index.html')).not.toMatch(/<script(?![^>]*\bsrc=)/);
    for (const file of ['chat.js', 'chat-connection.js', 'chat-view.js', 'chat-cards.js', 'chat-dom.js']) {
      expect(page(file), file).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    }
  });

  it('chat page: nothing else is served from its folder, nor from the source tree', async () => {
    const served = app();
    for (const path of ['/chat-page.ts', '/page/chat.js', '/../package.json', '/index.html', '/chat.js.map']) {
      expect((await served.request(path)).status, path).toBe(404);
    }
  });
});
