import { appendFileSync, readFileSync } from 'node:fs';

/**
 * What the MCP test server (./mcp-test-server.ts) counts, in its memory and, with `MCP_TEST_COUNTER_FILE` set, as
 * JSON lines in that file, so a test can count what happened in a server process it does not share memory with.
 */

export interface TestServerCounters {
  /**
   * Connections opened: a 2025-11-25 `initialize` session, or a 2026-07-28 stdio connection (a stdio process has one).
   * A 2026-07-28 client over HTTP has no session, so it counts none.
   */
  sessions: number;
  /** Calls per tool name, counted when the call starts (each round of a question by `input_required` counted). */
  calls: Record<string, number>;
  /** Calls per tool name whose cancellation reached the tool. */
  cancellations: Record<string, number>;
}

export interface TestServerEvent {
  event: 'start' | 'session' | 'call' | 'cancelled';
  tool?: string;
  pid: number;
}

export class TestServerRecorder {
  readonly counters: TestServerCounters = { sessions: 0, calls: {}, cancellations: {} };
  constructor(private readonly file = process.env.MCP_TEST_COUNTER_FILE) {
    this.write({ event: 'start', pid: process.pid });
  }

  session(): void {
    this.counters.sessions += 1;
    this.write({ event: 'session', pid: process.pid });
  }

  call(tool: string): void {
    this.counters.calls[tool] = (this.counters.calls[tool] ?? 0) + 1;
    this.write({ event: 'call', tool, pid: process.pid });
  }

  cancelled(tool: string): void {
    this.counters.cancellations[tool] = (this.counters.cancellations[tool] ?? 0) + 1;
    this.write({ event: 'cancelled', tool, pid: process.pid });
  }

  private write(event: TestServerEvent): void {
    // Appends of one short line are atomic, so several server processes can share the file.
    if (this.file !== undefined) appendFileSync(this.file, `${JSON.stringify(event)}\n`);
  }
}

/** The events appended to an `MCP_TEST_COUNTER_FILE` (empty when the file does not exist yet). */
export function readTestServerEvents(file: string): TestServerEvent[] {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return content
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TestServerEvent);
}

/** Totals over every server process that wrote to `file`; `processes` counts process starts. */
export function countTestServerEvents(file: string): TestServerCounters & { processes: number } {
  const totals = {
    processes: 0,
    sessions: 0,
    calls: {} as Record<string, number>,
    cancellations: {} as Record<string, number>,
  };
  for (const { event, tool } of readTestServerEvents(file)) {
    if (event === 'start') totals.processes += 1;
    else if (event === 'session') totals.sessions += 1;
    else if (event === 'call' && tool !== undefined) totals.calls[tool] = (totals.calls[tool] ?? 0) + 1;
    else if (event === 'cancelled' && tool !== undefined) {
      totals.cancellations[tool] = (totals.cancellations[tool] ?? 0) + 1;
    }
  }
  return totals;
}
