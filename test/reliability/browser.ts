import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { rememberProcess } from './helpers.js';

/**
 * Headless Chromium (Debian's `chromium` package) driven over the Chrome DevTools Protocol on a pipe
 * (`--remote-debugging-pipe`: JSON messages ended by NUL on file descriptors 3 and 4), the transport Playwright uses
 * for Chromium too. Only what the browser tests need: open a page, read its text, click, type, take a screenshot.
 */

/** The flags this network needs (facts.md): no sandbox as root, nothing that phones home. */
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--hide-scrollbars',
  '--remote-debugging-pipe',
];

/** The Chromium binary: `CHROMIUM_PATH`, else `chromium` on PATH. Fails saying how to install it. */
export function chromiumPath(): string {
  const candidate = process.env.CHROMIUM_PATH ?? 'chromium';
  const found = spawnSync(candidate, ['--version'], { encoding: 'utf8' });
  if (found.status !== 0) {
    throw new Error(
      `Chromium not found (${candidate}): install Debian's package (\`apt-get install -y chromium\`, as .ci/run does) ` +
        'or set CHROMIUM_PATH.',
    );
  }
  return candidate;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
  method: string;
}

export class Browser {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buffer = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly input: Writable,
    output: Readable,
    private readonly exited: Promise<void>,
  ) {
    output.on('data', (chunk: Buffer) => this.receive(chunk.toString('utf8')));
  }

  static async launch(options: { width?: number; height?: number } = {}): Promise<Browser> {
    const executable = chromiumPath();
    const args = [...CHROMIUM_FLAGS, `--window-size=${options.width ?? 1400},${options.height ?? 1000}`, 'about:blank'];
    const child = spawn(executable, args, { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
    rememberProcess(child.pid);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const input = child.stdio[3] as Writable;
    const output = child.stdio[4] as Readable;
    const browser = new Browser(child, input, output, exited);
    await browser.send('Browser.getVersion');
    return browser;
  }

  /** Send a CDP command (to the browser, or to a page's session) and wait for its answer. */
  send<T = Record<string, unknown>>(method: string, params: object = {}, sessionId?: string): Promise<T> {
    const id = this.nextId++;
    const message = JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) });
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.input.write(`${message}\0`);
    });
  }

  /** A new tab, with its CDP session. */
  async newPage(): Promise<Page> {
    const { targetId } = await this.send<{ targetId: string }>('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = await this.send<{ sessionId: string }>('Target.attachToTarget', { targetId, flatten: true });
    await this.send('Page.enable', {}, sessionId);
    return new Page(this, sessionId);
  }

  async close(): Promise<void> {
    await Promise.race([this.send('Browser.close').catch(() => undefined), sleep(5_000)]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private receive(text: string): void {
    this.buffer += text;
    let end: number;
    while ((end = this.buffer.indexOf('\0')) !== -1) {
      const message = JSON.parse(this.buffer.slice(0, end)) as {
        id?: number;
        result?: unknown;
        error?: { message: string };
      };
      this.buffer = this.buffer.slice(end + 1);
      if (message.id === undefined) continue; // an event: not needed here
      const pending = this.pending.get(message.id);
      if (!pending) continue;
      this.pending.delete(message.id);
      if (message.error) pending.reject(new Error(`${pending.method}: ${message.error.message}`));
      else pending.resolve(message.result);
    }
  }
}

export class Page {
  constructor(
    private readonly browser: Browser,
    private readonly sessionId: string,
  ) {}

  async goto(url: string): Promise<void> {
    const result = await this.browser.send<{ errorText?: string }>('Page.navigate', { url }, this.sessionId);
    if (result.errorText) throw new Error(`cannot open ${url}: ${result.errorText}`);
  }

  /** The value of a JavaScript expression in the page. */
  async evaluate<T>(expression: string): Promise<T> {
    const { result, exceptionDetails } = await this.browser.send<{
      result: { value?: T };
      exceptionDetails?: { text: string };
    }>('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, this.sessionId);
    if (exceptionDetails) throw new Error(`${expression}: ${exceptionDetails.text}`);
    return result.value as T;
  }

  /**
   * The page's visible text, then that of its same-origin frames (the Web UI renders a workflow's current details as
   * markdown in an iframe of its own origin).
   */
  text(): Promise<string> {
    return this.evaluate<string>(`(() => {
      const texts = [document.body ? document.body.innerText : ''];
      for (const frame of document.querySelectorAll('iframe')) {
        const body = frame.contentDocument && frame.contentDocument.body;
        if (body) texts.push(body.innerText);
      }
      return texts.join('\\n');
    })()`);
  }

  /** Waits until the page's text matches every pattern (single-page apps render after loading); returns the text. */
  async waitForText(patterns: readonly RegExp[], timeoutMs = 60_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let text = '';
    while (Date.now() < deadline) {
      text = await this.text();
      if (patterns.every((pattern) => pattern.test(text))) return text;
      await sleep(250);
    }
    const missing = patterns.filter((pattern) => !pattern.test(text)).map(String);
    throw new Error(`the page never showed ${missing.join(', ')}; it showed:\n${text.slice(0, 2_000)}`);
  }

  /** Click the first element whose text contains `text` (a link, a tab, a button). */
  async click(text: string): Promise<void> {
    const clicked = await this.evaluate<boolean>(`(() => {
      const wanted = ${JSON.stringify(text)};
      const candidates = [...document.querySelectorAll('a, button, [role="tab"], [role="button"]')];
      const element = candidates.find((node) => node.textContent && node.textContent.includes(wanted));
      if (!element) return false;
      element.click();
      return true;
    })()`);
    if (!clicked) throw new Error(`nothing to click with the text ${JSON.stringify(text)}`);
  }

  /** Focus the element `selector` names and type `text` into it, as a keyboard would (CDP `Input.insertText`). */
  async type(selector: string, text: string): Promise<void> {
    const focused = await this.evaluate<boolean>(`(() => {
      const element = document.querySelector(${JSON.stringify(selector)});
      if (!element) return false;
      element.focus();
      return document.activeElement === element;
    })()`);
    if (!focused) throw new Error(`nothing to type into at ${selector}`);
    await this.browser.send('Input.insertText', { text }, this.sessionId);
  }

  /** Press and release Enter in the focused element. */
  async pressEnter(): Promise<void> {
    const key = { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, nativeVirtualKeyCode: 13 };
    await this.browser.send('Input.dispatchKeyEvent', { type: 'keyDown', ...key, text: '\r' }, this.sessionId);
    await this.browser.send('Input.dispatchKeyEvent', { type: 'keyUp', ...key }, this.sessionId);
  }

  /** A PNG of the whole page. */
  async screenshot(): Promise<Buffer> {
    const { data } = await this.browser.send<{ data: string }>(
      'Page.captureScreenshot',
      { format: 'png', captureBeyondViewport: true },
      this.sessionId,
    );
    return Buffer.from(data, 'base64');
  }
}
