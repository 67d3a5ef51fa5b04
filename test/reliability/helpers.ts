import { spawn, type ChildProcess } from 'node:child_process';
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Connection, type Client, type WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import proto, { type temporal } from '@temporalio/proto';
import { searchAttributeFlags } from '../../src/temporal-servers/search-attributes.js';
import { readTestServerEvents } from '../../src/testing/mcp-test-server.js';

/** Shared by the fault runs: real processes (worker, MCP servers, Temporal server) and what they leave behind. */

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = path.join(REPO_ROOT, 'dist/cli/index.js');
export const TEST_SERVER = path.join(REPO_ROOT, 'dist/testing/mcp-test-server.js');
/** The chat page `serve` serves: tsc does not copy it, `npm run build` does. */
export const CHAT_PAGE = path.join(REPO_ROOT, 'dist/bridge/page/index.html');
/** Where each fault-run file writes its measured rows; scripts/reliability.mjs renders them into docs/reliability.md. */
export const RESULTS_DIR = path.join(REPO_ROOT, 'test-results/reliability');

/** The fault runs start the built CLI and test server: fail at once, saying what to run, when they are missing. */
export function requireBuild(): void {
  for (const file of [CLI, TEST_SERVER, CHAT_PAGE]) {
    if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first.`);
  }
}

/** Resolves with `promise`, or fails after `ms` naming what it waited for (tests must not hang on a lost turn). */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Poll `check` (real time) until it returns a value other than undefined/false. */
export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  { timeoutMs = 120_000, intervalMs = 50 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Every process a test started (workers, servers), so afterAll can SIGKILL whatever is left. */
const started = new Set<number>();

export function rememberProcess(pid: number | undefined): void {
  if (pid !== undefined) started.add(pid);
}

/** SIGKILL every remembered process and every MCP test server that wrote to one of `counterFiles`. */
export function killLeftovers(counterFiles: readonly string[] = []): void {
  const pids = new Set(started);
  for (const file of counterFiles) for (const event of readTestServerEvents(file)) pids.add(event.pid);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  started.clear();
}

export interface WorkerEnvironment {
  temporalAddress: string;
  taskQueue: string;
  modelBaseUrl: string;
  mcpConfigPath: string;
  /** The worker's stdout and stderr are appended here. */
  logFile: string;
  /** More environment variables, e.g. `DURABLE_AGENT_DEPLOYMENT_NAME` and `DURABLE_AGENT_BUILD_ID`. */
  extraEnvironment?: Record<string, string>;
  /** The CLI to run, e.g. an earlier release's build; default this tree's `dist/cli/index.js`. */
  cli?: string;
}

/** `node dist/cli/index.js worker`: the durable-agent worker as users run it, in its own process. */
export class WorkerProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly logFile: string,
    private readonly exited: Promise<void>,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Start a worker and wait until it polls its task queue. */
  static async start(options: WorkerEnvironment): Promise<WorkerProcess> {
    const environment: NodeJS.ProcessEnv = { ...process.env };
    for (const name of Object.keys(environment)) {
      if (/^TEMPORAL_(NAMESPACE|API_KEY|TLS)/.test(name) || name.startsWith('DURABLE_AGENT_')) delete environment[name];
    }
    Object.assign(environment, {
      TEMPORAL_ADDRESS: options.temporalAddress,
      DURABLE_AGENT_TASK_QUEUE: options.taskQueue,
      OPENAI_BASE_URL: options.modelBaseUrl,
      OPENAI_API_KEY: 'test',
      DURABLE_AGENT_MODEL: 'scripted-model',
      DURABLE_AGENT_MCP_CONFIG: options.mcpConfigPath,
      ...options.extraEnvironment,
    });
    const cli = options.cli ?? CLI;
    const child = spawn(process.execPath, [cli, 'worker'], {
      cwd: path.resolve(path.dirname(cli), '../..'),
      env: environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    rememberProcess(child.pid);
    const log = createWriteStream(options.logFile, { flags: 'a' });
    log.write(`--- worker pid ${child.pid} started at ${new Date().toISOString()}\n`);
    child.stderr?.pipe(log, { end: false });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const ready = new Promise<void>((resolve, reject) => {
      let output = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        log.write(chunk);
        output += chunk.toString();
        if (output.includes('Worker: polling task queue')) resolve();
      });
      child.once('exit', (code, signal) =>
        reject(new Error(`worker exited (${signal ?? code}) before polling; log: ${options.logFile}`)),
      );
    });
    await within(ready, 120_000, `the worker to poll ${options.taskQueue}`);
    return new WorkerProcess(child, options.logFile, exited);
  }

  /** SIGKILL: no shutdown, no flushing, as a crash or an OOM kill. Resolves once the process is gone. */
  async kill(): Promise<void> {
    this.killNow();
    await this.exited;
  }

  /**
   * SIGTERM, as a deploy stops a process: the worker drains and exits. A process still running after `graceMs` gets
   * SIGKILL, as a deploy then does (`docker compose` waits 10 s). Resolves with how it exited.
   */
  async stop(graceMs: number): Promise<string> {
    if (this.alive()) this.child.kill('SIGTERM');
    const timer = new AbortController();
    const inTime = await Promise.race([
      this.exited.then(() => true),
      sleep(graceMs, false, { signal: timer.signal }).catch(() => true),
    ]);
    timer.abort();
    if (inTime) return this.child.signalCode ?? `exit code ${this.child.exitCode}`;
    await this.kill();
    return `SIGKILL at the end of the ${graceMs / 1000} s grace period`;
  }

  /** True while the process runs. */
  alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Send SIGKILL without waiting, for a kill that must land within milliseconds of an event. */
  killNow(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  /** The identity the worker gives Temporal by default (`<pid>@<host>`), as history records it. */
  identityPrefix(): string {
    return `${this.pid}@`;
  }
}

/** An `mcpServers` file with our test server over stdio, counting every call in `counterFile`. */
export function writeMcpConfig(file: string, counterFile: string, extra: Record<string, unknown> = {}): void {
  const stdio = { command: process.execPath, args: [TEST_SERVER], env: { MCP_TEST_COUNTER_FILE: counterFile } };
  const config = {
    mcpServers: {
      test: stdio,
      // The same server again, offering only `hang`, with a short timeout: a slow tool that is not idempotent. Longer
      // than a call's first heartbeat (3 s, src/worker/activities/calls/heartbeat.ts), so that Temporal records its
      // "sent" heartbeat before the timeout ends it: the worker-crash run kills the worker only after that.
      effects: { ...stdio, allowTools: ['hang'], timeoutMs: 6_000 },
      ...extra,
    },
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
}

/** Calls per tool counted by the test servers that wrote to `counterFile` (all processes, all restarts). */
export function callsPerTool(counterFile: string): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const event of readTestServerEvents(counterFile)) {
    if (event.event === 'call' && event.tool) calls[event.tool] = (calls[event.tool] ?? 0) + 1;
  }
  return calls;
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The value of the first payload of a list (activity input, heartbeat details, results). */
export function firstPayload(payloads: temporal.api.common.v1.IPayloads | null | undefined): unknown {
  const payload = payloads?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload(payload) : undefined;
}

export interface ActivityRecord {
  scheduledEventId: number;
  activityId: string;
  type: string;
  /** `callTool`: the tool's name on its server; `callModel`: `round-<n>`. */
  label: string;
  /** What the tool's annotations say about repeating it. */
  safeToRepeat: boolean;
  completed: boolean;
  /** Attempt recorded when the activity finished (undefined while it runs). */
  attempt?: number;
  /** Identity of the worker that ran the last attempt. */
  identity?: string;
}

/** Activities of a history, in the order they were scheduled, with how they finished. */
export function activitiesOf(events: readonly HistoryEvent[]): ActivityRecord[] {
  const records = new Map<number, ActivityRecord>();
  for (const event of events) {
    const id = Number(event.eventId);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const type = scheduled.activityType?.name ?? '?';
      const input = firstPayload(scheduled.input) as
        { tool?: { originalName: string; annotations: Record<string, boolean> }; round?: number } | undefined;
      records.set(id, {
        scheduledEventId: id,
        activityId: scheduled.activityId ?? '',
        type,
        label: input?.tool ? input.tool.originalName : input?.round !== undefined ? `round-${input.round}` : type,
        safeToRepeat: input?.tool
          ? input.tool.annotations.readOnlyHint === true || input.tool.annotations.idempotentHint === true
          : true,
        completed: false,
      });
    }
    const startedEvent = event.activityTaskStartedEventAttributes;
    if (startedEvent) {
      const record = records.get(Number(startedEvent.scheduledEventId));
      if (record) {
        record.attempt = startedEvent.attempt ?? undefined;
        record.identity = startedEvent.identity ?? undefined;
      }
    }
    const finished =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskTimedOutEventAttributes ??
      event.activityTaskCanceledEventAttributes;
    if (finished) {
      const record = records.get(Number(finished.scheduledEventId));
      if (record) record.completed = true;
    }
  }
  return [...records.values()];
}

export async function historyEvents(handle: WorkflowHandle): Promise<HistoryEvent[]> {
  return (await handle.fetchHistory()).events ?? [];
}

const State = proto.temporal.api.enums.v1.PendingActivityState;

/** The activities running or waiting at this moment: `started` means a worker had picked the attempt up. */
export async function pendingActivities(
  handle: WorkflowHandle,
): Promise<{ activityId: string; type: string; started: boolean; attempt: number; heartbeat: unknown }[]> {
  const description = await handle.describe();
  return (description.raw.pendingActivities ?? []).map((activity) => ({
    activityId: activity.activityId ?? '',
    type: activity.activityType?.name ?? '?',
    started:
      activity.state === State.PENDING_ACTIVITY_STATE_STARTED ||
      activity.state === State.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED,
    attempt: activity.attempt ?? 1,
    heartbeat: firstPayload(activity.heartbeatDetails),
  }));
}

/**
 * Waits, by long-polling history, for the first event that `match` accepts, and calls `then` as soon as it is seen
 * (before returning), to act within milliseconds of the event.
 */
export async function onHistoryEvent(
  client: Client,
  workflowId: string,
  match: (event: HistoryEvent, seen: readonly HistoryEvent[]) => boolean,
  then: () => void,
): Promise<HistoryEvent> {
  const seen: HistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    const response = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId },
      nextPageToken,
      waitNewEvent: true,
    });
    for (const event of response.history?.events ?? []) {
      seen.push(event);
      if (match(event, seen)) {
        then();
        return event;
      }
    }
    nextPageToken = response.nextPageToken?.length ? response.nextPageToken : undefined;
  }
}

/** One measured row of the results table in docs/reliability.md. */
export interface ResultRow {
  /** Group heading, e.g. "Worker killed (SIGKILL)". */
  group: string;
  fault: string;
  /** What happened, in a sentence. */
  outcome: string;
  /** The counts the test asserted, e.g. "rounds 7 (baseline 7) · tool calls 8 (8)". */
  counts: string;
  /** Real seconds from the fault to the recovered result (informative, never asserted): the "Fault → turn done" column. */
  recoverySeconds?: number;
  /** Real seconds from a SIGKILL to the start of the interrupted call's next attempt: the "SIGKILL → next attempt" column. */
  resumedSeconds?: number;
  passed: boolean;
}

/** Collects the rows of one test file and writes them (also for failed runs) to test-results/reliability/<name>.json. */
export class ResultRows {
  private readonly rows: (ResultRow & { order: number })[] = [];
  private next = 0;
  constructor(private readonly name: string) {}

  /** Reserve a row's place, so the table keeps the order of the file whatever order concurrent tests finish in. */
  slot(): number {
    return this.next++;
  }

  add(row: ResultRow, order = this.slot()): void {
    this.rows.push({ ...row, order });
  }

  write(): void {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const rows = [...this.rows].sort((a, b) => a.order - b.order).map(({ order: _order, ...row }) => row);
    writeFileSync(
      path.join(RESULTS_DIR, `${this.name}.json`),
      `${JSON.stringify({ file: this.name, recordedAt: new Date().toISOString(), rows }, null, 2)}\n`,
    );
  }
}

/** Copies the `.log` files of a run's temporary directory where CI keeps results (prefixed), then removes it. */
export function keepLogsAndRemove(tmp: string, prefix: string): void {
  const logs = path.join(RESULTS_DIR, 'logs');
  mkdirSync(logs, { recursive: true });
  for (const file of readdirSync(tmp).filter((name) => name.endsWith('.log'))) {
    copyFileSync(path.join(tmp, file), path.join(logs, `${prefix}.${file}`));
  }
  rmSync(tmp, { recursive: true, force: true });
}

/** The last lines of a log file, for a failure message. */
export function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A Temporal dev server (`temporal server start-dev`) on a database file, as its own process, to kill and restart. */
export class DevServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    private readonly exited: Promise<void>,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /**
   * Start on `port` with state in `dbFile` (the same file and port after a restart), with durable-agent's search
   * attributes, and wait until the default namespace answers.
   */
  static async start(options: { port: number; dbFile: string; logFile: string }): Promise<DevServerProcess> {
    const executable = process.env.TEMPORAL_CLI_PATH;
    if (!executable)
      throw new Error('TEMPORAL_CLI_PATH is not set: run through vitest (test/global-setup.ts sets it).');
    const args = [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(options.port),
      '--db-filename',
      options.dbFile,
      '--namespace',
      'default',
      '--log-level',
      'warn',
      ...searchAttributeFlags(),
    ];
    const log = createWriteStream(options.logFile, { flags: 'a' });
    const child = spawn(executable, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    rememberProcess(child.pid);
    log.write(`--- dev server pid ${child.pid} started at ${new Date().toISOString()}\n`);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    const address = `127.0.0.1:${options.port}`;
    await until(
      async () => {
        if (gone) throw new Error(`the dev server exited at start; log: ${options.logFile}\n${tail(options.logFile)}`);
        try {
          const connection = await Connection.connect({ address, connectTimeout: 1_000 });
          try {
            await connection.workflowService.describeNamespace({ namespace: 'default' });
            return true;
          } finally {
            await connection.close();
          }
        } catch {
          return false;
        }
      },
      `the dev server at ${address}`,
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    return new DevServerProcess(child, exited);
  }

  /** SIGKILL: the server dies without a chance to flush or say goodbye to its clients. */
  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Our MCP test server over Streamable HTTP in its own process, so a test can freeze it (SIGSTOP) or kill it. */
export class HttpTestServerProcess {
  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly exited: Promise<void>,
  ) {}

  get pid(): number {
    return this.child.pid ?? -1;
  }

  static async start(counterFile: string): Promise<HttpTestServerProcess> {
    const child = spawn(process.execPath, [TEST_SERVER, '--http', '--port', '0'], {
      env: { ...process.env, MCP_TEST_COUNTER_FILE: counterFile },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    rememberProcess(child.pid);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const url = await within(
      new Promise<string>((resolve, reject) => {
        let output = '';
        child.stdout?.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const line = output.split('\n')[0];
          if (output.includes('\n') && line) resolve(line.trim());
        });
        child.once('exit', (code) => reject(new Error(`the HTTP test server exited (${code}) before listening`)));
      }),
      30_000,
      'the HTTP test server to listen',
    );
    return new HttpTestServerProcess(child, url, exited);
  }

  /** Stop answering: the process is frozen, its sockets stay open, requests pile up unanswered. */
  freeze(): void {
    process.kill(this.pid, 'SIGSTOP');
  }

  /** Answer again: the frozen process goes on with everything that arrived meanwhile. */
  thaw(): void {
    process.kill(this.pid, 'SIGCONT');
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.thaw();
      this.child.kill('SIGKILL');
    }
    await this.exited;
  }
}
