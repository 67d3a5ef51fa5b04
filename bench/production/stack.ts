import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { repoRoot } from '../options.js';

const execFileAsync = promisify(execFile);
const SCRIPT = `${repoRoot}scripts/production-stack.mjs`;

/** One line of `production-stack.mjs status DIR`. */
export interface StackProcess {
  role: 'postgres' | 'history' | 'matching' | 'frontend' | 'internal-worker';
  pid: number;
  running: boolean;
  /** postgres only: the libpq URL of the `temporal` database. */
  url?: string;
  visibilityUrl?: string;
  /** The Temporal services: their ports, `metrics` the Prometheus endpoint. */
  ports?: { metrics?: number };
  /** frontend only: TEMPORAL_ADDRESS. */
  address?: string;
}

export const TEMPORAL_ROLES = ['frontend', 'history', 'matching', 'internal-worker'] as const;
export const SERVER_ROLES = [...TEMPORAL_ROLES, 'postgres'] as const;
export type ServerRole = (typeof SERVER_ROLES)[number];

/**
 * The native production stack of scripts/production-stack.mjs (docs/production.md), driven through its command line:
 * `up` (unless the run was given a stack that runs already), `status` for the pids, ports and the database URL,
 * `down` at the end of a stack this run brought up.
 */
export class ProductionStack {
  private constructor(
    readonly dir: string,
    readonly address: string,
    readonly processes: StackProcess[],
    private readonly ownedByRun: boolean,
  ) {}

  /** `up DIR` (its progress on our stderr), then `status DIR`. `reuse`: DIR runs already, only read its status. */
  static async open(dir: string, reuse: boolean): Promise<ProductionStack> {
    let address: string | undefined;
    if (!reuse) {
      const { stdout } = await run(['up', dir], 900_000);
      address = /TEMPORAL_ADDRESS=(\S+)/.exec(stdout)?.[1];
      if (address === undefined) throw new Error(`production-stack up ${dir} printed no TEMPORAL_ADDRESS:\n${stdout}`);
    }
    const processes = await ProductionStack.statusOf(dir);
    const frontend = processes.find((process) => process.role === 'frontend');
    address ??= frontend?.address;
    if (address === undefined) throw new Error(`production-stack status ${dir} names no frontend address`);
    return new ProductionStack(dir, address, processes, !reuse);
  }

  static async statusOf(dir: string): Promise<StackProcess[]> {
    const { stdout } = await run(['status', dir], 60_000);
    const processes = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as StackProcess);
    const down = processes.filter((process) => !process.running).map((process) => process.role);
    if (down.length > 0) throw new Error(`production stack in ${dir}: not running: ${down.join(', ')}`);
    return processes;
  }

  process(role: ServerRole): StackProcess {
    const found = this.processes.find((process) => process.role === role);
    if (found === undefined) throw new Error(`production stack in ${this.dir}: no ${role} process`);
    return found;
  }

  get databaseUrl(): string {
    const url = this.process('postgres').url;
    if (url === undefined) throw new Error('production-stack status: the postgres line has no url');
    return url;
  }

  /** The Prometheus endpoint of each Temporal service. */
  metricsUrls(): string[] {
    return TEMPORAL_ROLES.flatMap((role) => {
      const port = this.process(role).ports?.metrics ?? metricsPortFromState(this.dir, role);
      return port === undefined ? [] : [`http://127.0.0.1:${port}/metrics`];
    });
  }

  /** `down DIR`, if this run brought the stack up. */
  async close(): Promise<void> {
    if (this.ownedByRun) await run(['down', this.dir], 120_000);
  }
}

function metricsPortFromState(dir: string, role: string): number | undefined {
  try {
    const state = JSON.parse(readFileSync(`${dir}/state.json`, 'utf8')) as {
      ports?: Record<string, { metrics?: number }>;
    };
    return state.ports?.[role]?.metrics;
  } catch {
    return undefined;
  }
}

async function run(args: string[], timeout: number): Promise<{ stdout: string }> {
  const child = execFileAsync(process.execPath, [SCRIPT, ...args], { timeout, maxBuffer: 16 * 1024 * 1024 });
  child.child.stderr?.pipe(process.stderr);
  try {
    return await child;
  } catch (error) {
    const { stdout = '', code } = error as { stdout?: string; code?: number };
    throw new Error(`node scripts/production-stack.mjs ${args.join(' ')} failed (exit ${code}): ${stdout.trim()}`);
  }
}
