import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ensureOwnDependencies } from '../own-dependencies.js';

export interface ContenderDefinition {
  name: string;
  label: string;
  /** The script run as `node <script> serve|replay <json>`. */
  script: string;
  /** Keeps a workflow history (can be measured and replayed). */
  durable: boolean;
  /** Temporal's own integration, on its own SDK version (bench/peer). */
  peer?: boolean;
  /** A variant of durable-agent that answers a profiling question; runs only with `--experiments`. */
  experiment?: boolean;
  env?: Record<string, string>;
  /** Get it ready to start; returns why it cannot run, if it cannot. */
  prepare?: () => Promise<string | undefined>;
}

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
/** bench/peer in the source tree (this file runs from bench/dist/bench/contenders). */
const peerDirectory = fileURLToPath(new URL('../../../peer', import.meta.url));

export const FLOOR: ContenderDefinition = {
  name: 'temporal-floor',
  label: 'Raw Temporal floor (21 no-op activities)',
  script: here('./floor.js'),
  durable: true,
};

export const IN_PROCESS: ContenderDefinition = {
  name: 'in-process',
  label: 'In-process loop (openai + McpPool, no durability)',
  script: here('./in-process.js'),
  durable: false,
};

export const CONTENDERS: ContenderDefinition[] = [
  IN_PROCESS,
  FLOOR,
  {
    name: 'durable-agent',
    label: 'durable-agent',
    script: here('./durable-agent.js'),
    durable: true,
  },
  {
    // The same worker with DURABLE_AGENT_ENCRYPTION_KEYS set: every payload compressed and AES-256-GCM encrypted by
    // the client and the worker, so the difference to durable-agent is the codec's cost per step.
    name: 'durable-agent-encrypted',
    label: 'durable-agent, payloads encrypted',
    script: here('./durable-agent.js'),
    durable: true,
    // One key for the run, shared by the contender and its replay processes (which decrypt the histories).
    env: { DURABLE_AGENT_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}` },
  },
  {
    name: 'openai-agents',
    label: '@temporalio/openai-agents 1.23.0',
    script: `${peerDirectory}/contender.mjs`,
    durable: true,
    peer: true,
    // Its tracing exports to OpenAI's API by default: nothing leaves the machine in a benchmark.
    env: { OPENAI_AGENTS_DISABLE_TRACING: '1' },
    prepare: () => ensureOwnDependencies(peerDirectory, '@temporalio/openai-agents/package.json'),
  },
];

/**
 * The same worker and client with tracing on (`--tracing`): every span exported over OTLP/HTTP to a sink in the
 * contender's process, so the difference to durable-agent is the cost of tracing per step.
 */
export const TRACED: ContenderDefinition = {
  name: 'durable-agent-traced',
  label: 'durable-agent, traced (OTLP)',
  script: here('./durable-agent.js'),
  durable: true,
  env: { BENCH_TRACING: '1' },
};

/**
 * Variants of durable-agent that isolate one cost each, run side by side with the others by `--experiments`. They
 * change nothing in src/: the contender applies them from outside (see bench/contenders/durable-agent.ts).
 */
export const EXPERIMENTS: ContenderDefinition[] = [
  {
    name: 'durable-agent-no-heartbeats',
    label: 'durable-agent, heartbeats dropped',
    script: here('./durable-agent.js'),
    durable: true,
    experiment: true,
    env: { BENCH_EXPERIMENT: 'no-heartbeats' },
  },
  {
    name: 'durable-agent-no-heartbeat-timeout',
    label: 'durable-agent, no heartbeat timeout',
    script: here('./durable-agent.js'),
    durable: true,
    experiment: true,
    env: { BENCH_EXPERIMENT: 'no-heartbeat-timeout' },
  },
];
