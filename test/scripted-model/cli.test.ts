import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// The CLI is tested as users run it, from the build; `npm test` builds first.
const CLI = fileURLToPath(new URL('../../dist/cli/index.js', import.meta.url));
const CLI_TIMEOUT_MS = 30_000;

interface Running {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

const children: ChildProcess[] = [];

function runCli(args: string[]): Running {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first with npx tsc -p tsconfig.build.json`);
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, exited, stderr: () => stderr };
}

async function firstLine(running: Running): Promise<string> {
  const lines = createInterface({ input: running.child.stdout! });
  const line = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    running.exited.then(({ code }) => {
      throw new Error(`the CLI exited with code ${code} before printing a line: ${running.stderr()}`);
    }),
  ]);
  lines.close();
  return line;
}

describe('durable-agent scripted-model', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'scripted-model-cli-'));
  });
  afterEach(() => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  afterAll(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it(
    'prints its base URL first, serves the script over HTTP until SIGTERM, then exits cleanly',
    async () => {
      const script = path.join(directory, 'script.json');
      await writeFile(script, JSON.stringify([{ content: 'Hello from the CLI.' }]));
      const running = runCli(['scripted-model', '--script', script, '--port', '0']);

      const baseUrl = await firstLine(running);
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const answer = await fetch(`${baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'wf-cli/run-1/turn-1/round-1' },
        body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      const pastEnd = await fetch(`${baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'idempotency-key': 'wf-cli/run-1/turn-1/round-2' },
        body: JSON.stringify({ model: 'gpt-test', messages: [] }),
      });
      const recorded = await fetch(`${new URL(baseUrl).origin}/_scripted/requests?conversation=wf-cli`);
      running.child.kill('SIGTERM');

      expect(answer.status).toBe(200);
      expect(
        ((await answer.json()) as { choices: { message: { content: string } }[] }).choices[0]?.message.content,
      ).toBe('Hello from the CLI.');
      expect(pastEnd.status).toBe(500);
      expect(((await recorded.json()) as { stepIndex: number | null }[]).map((request) => request.stepIndex)).toEqual([
        0,
        null,
      ]);
      expect(await running.exited).toEqual({ code: 0, signal: null });
      expect(running.stderr()).toContain(`ran past the end of ${script}`);
    },
    CLI_TIMEOUT_MS,
  );

  it(
    'exits with the usage code and names the file, step and key when the script is invalid',
    async () => {
      const script = path.join(directory, 'invalid.json');
      await writeFile(script, JSON.stringify([{ toolCalls: [{ name: 'files__list', arguments: 3 }] }]));
      const running = runCli(['scripted-model', '--script', script]);

      expect(await running.exited).toEqual({ code: 2, signal: null });
      expect(running.stderr()).toContain(`${script}: step 0 "toolCalls[0].arguments": expected an object or a string`);
    },
    CLI_TIMEOUT_MS,
  );
});
