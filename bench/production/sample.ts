import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Clock ticks per second of /proc/<pid>/stat times; 100 on every Linux this runs on. */
const CLOCK_TICKS = 100;

interface ProcStat {
  ppid: number;
  /** utime + stime, ms. */
  ownMs: number;
  /** cutime + cstime: children that ended and were waited for, ms. */
  childrenMs: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at the last ')': state, ppid, … utime is the 12th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tick = (index: number) => Number(fields[index]);
    return {
      ppid: tick(1),
      ownMs: ((tick(11) + tick(12)) * 1000) / CLOCK_TICKS,
      childrenMs: ((tick(13) + tick(14)) * 1000) / CLOCK_TICKS,
    };
  } catch {
    return undefined;
  }
}

/** Every process on the machine with its parent, read once per sample. */
function processTable(): Map<number, ProcStat> {
  const table = new Map<number, ProcStat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat !== undefined) table.set(Number(name), stat);
  }
  return table;
}

/**
 * CPU time of a process tree in ms: the root's own and that of its children that ended (a postgres backend that
 * exits is added to the postmaster's cutime once reaped), plus every live descendant's own (PostgreSQL's backends,
 * a contender's MCP server). A descendant alive at one sample and reaped by the next moves from the one sum to the
 * other, so differences between two samples stay right.
 */
export function treeCpuMs(root: number, table = processTable()): number {
  const rootStat = table.get(root);
  if (rootStat === undefined) return Number.NaN;
  let total = rootStat.ownMs + rootStat.childrenMs;
  const children = new Map<number, number[]>();
  for (const [pid, stat] of table) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), pid]);
  const stack = [...(children.get(root) ?? [])];
  for (let guard = 0; stack.length > 0 && guard < 100_000; guard++) {
    const pid = stack.pop()!;
    total += table.get(pid)!.ownMs;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** CPU ms of each named process tree, all read from one table. */
export function sampleCpu(roots: Record<string, number[]>): Record<string, number> {
  const table = processTable();
  return Object.fromEntries(
    Object.entries(roots).map(([name, pids]) => [name, pids.reduce((sum, pid) => sum + treeCpuMs(pid, table), 0)]),
  );
}

/** What PostgreSQL has written so far: rows (all databases of the cluster) and WAL bytes. */
export interface DatabaseSample {
  /** tup_inserted + tup_updated + tup_deleted of every database. */
  rows: number;
  /** Rows written per table (`temporal.executions`, …). */
  tables: Record<string, number>;
  walBytes: bigint;
}

async function psql(url: string, sql: string): Promise<string> {
  const { stdout } = await execFileAsync('psql', [url, '-Atc', sql], { timeout: 60_000 });
  return stdout.trim();
}

function lsnBytes(lsn: string): bigint {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

const TABLE_ROWS = `select current_database() || '.' || relname || '|' || (n_tup_ins + n_tup_upd + n_tup_del)
  from pg_stat_user_tables where n_tup_ins + n_tup_upd + n_tup_del > 0`;

/** Rows and WAL bytes written so far; `url` the `temporal` database's, `visibilityUrl` the other one's. */
export async function sampleDatabase(url: string, visibilityUrl: string | undefined): Promise<DatabaseSample> {
  const [head, ...main] = (
    await psql(
      url,
      `select (select sum(tup_inserted + tup_updated + tup_deleted) from pg_stat_database) || '|' || pg_current_wal_lsn();
       ${TABLE_ROWS}`,
    )
  ).split('\n');
  const visibility = visibilityUrl === undefined ? [] : (await psql(visibilityUrl, TABLE_ROWS)).split('\n');
  const [rows = '0', lsn = '0/0'] = (head ?? '').split('|');
  const tables: Record<string, number> = {};
  for (const line of [...main, ...visibility]) {
    const [table, count] = line.split('|');
    if (table && count) tables[table] = Number(count);
  }
  return { rows: Number(rows), tables, walBytes: lsnBytes(lsn) };
}

/** The counters of Temporal Server's Prometheus endpoints that this benchmark reads, summed over the services. */
export interface MetricsSample {
  /** The server's own estimate of billable actions (`action`), by action_type, namespace `default`. */
  actions: Record<string, number>;
  /** `service_requests` of the frontend, namespace `default`, by operation (RecordActivityTaskHeartbeat, …). */
  frontendRequests: Record<string, number>;
}

const LINE = /^(\w+)\{([^}]*)\}\s+([0-9.eE+-]+)$/;

function labelsOf(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/(\w+)="([^"]*)"/g)) labels[match[1]!] = match[2]!;
  return labels;
}

export async function sampleMetrics(urls: string[]): Promise<MetricsSample> {
  const sample: MetricsSample = { actions: {}, frontendRequests: {} };
  for (const url of urls) {
    const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    for (const line of text.split('\n')) {
      const match = LINE.exec(line);
      if (match === null) continue;
      const [, name, labelText = '', value] = match;
      const labels = labelsOf(labelText);
      if (labels.namespace !== 'default') continue;
      if (name === 'action') {
        const type = labels.action_type ?? 'unknown';
        sample.actions[type] = (sample.actions[type] ?? 0) + Number(value);
      } else if (name === 'service_requests' && labels.service_name === 'frontend') {
        const operation = labels.operation ?? 'unknown';
        sample.frontendRequests[operation] = (sample.frontendRequests[operation] ?? 0) + Number(value);
      }
    }
  }
  return sample;
}

/** `after − before` of every key of two counter maps (keys missing before count from 0). */
export function difference(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([key, value]) => [key, value - (before[key] ?? 0)] as const)
      .filter(([, value]) => value !== 0),
  );
}
