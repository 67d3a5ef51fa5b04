import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { baselineContender } from './baseline.js';
import { CONTENDERS, EXPERIMENTS, FLOOR, TRACED, type ContenderDefinition } from './contenders/index.js';
import { providerContenders } from './contenders/providers.js';
import { log } from './log.js';
import { narrowPlan, PLANS, scalePlan, type Plan } from './plan.js';

/** The repository's root, with a trailing slash (this file runs from bench/dist/bench). */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

function parseValues(args: string[]) {
  return parseArgs({
    args,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      // The peer runs in every plan; `--peer` (once needed to add it to a quick run) is still accepted.
      peer: { type: 'boolean', default: false },
      'no-peer': { type: 'boolean', default: false },
      'stock-server': { type: 'boolean', default: false },
      // Eager activities are on by default, as `durable-agent dev` runs them; `--eager` (once needed) is still accepted.
      eager: { type: 'boolean', default: false },
      'no-eager': { type: 'boolean', default: false },
      experiments: { type: 'boolean', default: false },
      tracing: { type: 'boolean', default: false },
      providers: { type: 'string' },
      baseline: { type: 'string' },
      scale: { type: 'string' },
      delays: { type: 'string' },
      concurrency: { type: 'string' },
      'cpu-prof': { type: 'string' },
      render: { type: 'boolean', default: false },
      'no-history': { type: 'boolean', default: false },
      'first-token': { type: 'boolean', default: false },
      'no-first-token': { type: 'boolean', default: false },
      out: { type: 'string' },
      // `--stack production`: durable-agent and the floor on scripts/production-stack.mjs (bench/production/run.ts).
      stack: { type: 'string' },
      // `--long`: conversations of a thousand steps, a run of their own (bench/long/).
      long: { type: 'boolean', default: false },
      // `--tenants`: the noisy-neighbour benchmark alone (bench/tenants/run.ts).
      tenants: { type: 'boolean', default: false },
      'stack-dir': { type: 'string' },
      conversations: { type: 'string' },
      chain: { type: 'string' },
      rounds: { type: 'string' },
      turns: { type: 'string' },
    },
  }).values;
}

/** The command line as given (see bench/notes.md, "Running it"). */
export type BenchValues = ReturnType<typeof parseValues>;

export interface BenchOptions {
  values: BenchValues;
  plan: Plan;
  /** Where benchmarks.{json,md} (and the chart) go. */
  outDir: string;
  /** Extra arguments of `temporal server start-dev`. */
  serverArgs: string[];
}

export function readOptions(args = process.argv.slice(2)): BenchOptions {
  const values = parseValues(args);
  const narrowed = narrowPlan(values.quick ? PLANS.quick : PLANS.full, values.delays, values.concurrency);
  const scaled = values.scale === undefined ? narrowed : scalePlan(narrowed, Number(values.scale));
  const plan = firstTokenOnly(scaled, values);
  const variant = runVariant(values);
  return {
    values,
    plan,
    // Only the full, default run replaces the published figures; every other run writes under bench/dist.
    outDir: values.out ?? (variant ? `${repoRoot}bench/dist/runs/${variant}` : `${repoRoot}docs`),
    serverArgs: devServerArguments({ stock: values['stock-server'], eager: !values['no-eager'] }),
  };
}

/** A name for a run that is not the full default one, from its options (empty for the full default run). */
function runVariant(values: BenchValues): string {
  return [
    values.quick && 'quick',
    values.only && `only-${values.only}`,
    values.delays && `delays-${values.delays}`,
    values.concurrency && `concurrency-${values.concurrency}`,
    values.experiments && 'experiments',
    values.tracing && 'tracing',
    values.providers && `providers-${values.providers.replace(/,/g, '-')}`,
    values.scale && `scale-${values.scale}`,
    values.baseline && `baseline-${values.baseline.replace(/[^\w.-]/g, '_')}`,
    values['no-eager'] && 'no-eager',
    values['stock-server'] && 'stock-server',
    values['no-history'] && 'no-history',
    values['first-token'] && 'first-token',
    values['no-first-token'] && 'no-first-token',
    values.peer && !values.quick && 'peer',
    values['no-peer'] && 'no-peer',
  ]
    .filter(Boolean)
    .join('_');
}

/** `--first-token`: that measurement alone (no batches, histories or replay); `--no-first-token`: without it. */
function firstTokenOnly(plan: Plan, values: BenchValues): Plan {
  if (values['first-token'] && values['no-first-token']) {
    throw new Error(
      '--first-token measures only the first token and --no-first-token leaves it out: give one of them.',
    );
  }
  if (values['no-first-token']) return { ...plan, firstToken: undefined };
  if (!values['first-token']) return plan;
  return { ...plan, modelDelaysMs: [], levels: [], longConversation: undefined, replayTargetEvents: 0 };
}

/**
 * `--stock-server`: the dev server's default settings (no eager activities either). Otherwise: the dev server runs one history shard, and each shard's transfer-queue reader polls at most 20 times a second
 * (`history.transferProcessorMaxPollRPS`): every workflow or activity task then waits up to 50 ms before it is
 * dispatched, about 80 ms per step, which would hide every other cost. A cluster spreads workflows over hundreds of
 * shards; here the limit is raised so that the benchmark measures orchestration. `--stock-server` keeps the default.
 */
function devServerArguments(options: { stock: boolean; eager: boolean }): string[] {
  const values = options.stock
    ? []
    : [
        'history.transferProcessorMaxPollRPS=1000',
        // Off by default in the open-source server, on in `durable-agent dev` and docker-compose.yml: the activity
        // comes back in the workflow task's response (src/temporal-servers/dynamic-config.ts). `--no-eager` without.
        ...(options.eager ? ['system.enableActivityEagerExecution=true'] : []),
      ];
  return values.flatMap((value) => ['--dynamic-config-value', value]);
}

/**
 * The contenders this run measures: the standard ones (`--only` keeps some, the floor always; `--no-peer` drops
 * Temporal's own integration), the `--baseline` builds (built here when missing), durable-agent on each of the
 * `--providers`, and the `--experiments` variants.
 */
export async function chooseContenders({ values }: BenchOptions): Promise<ContenderDefinition[]> {
  if (values['first-token']) return CONTENDERS.filter((definition) => definition.name === 'durable-agent');
  const only = values.only?.split(',');
  const baseline: ContenderDefinition[] = [];
  const encrypted = CONTENDERS.find((definition) => definition.name === 'durable-agent-encrypted');
  for (const ref of values.baseline?.split(',') ?? []) {
    const plain = await baselineContender(repoRoot, ref);
    baseline.push(plain);
    // Beside the encrypted contender, the baseline encrypted too (same key), so the codec is compared before and after.
    if (encrypted && (only === undefined || only.includes(encrypted.name))) {
      const name = `${plain.name}-encrypted`;
      baseline.push({ ...plain, name, label: `${plain.label}, payloads encrypted`, env: encrypted.env });
    }
  }
  const traced = values.tracing ? [TRACED] : [];
  // Asked for by name, like the baselines: `--only` does not drop them.
  const providers = values.providers === undefined ? [] : providerContenders(values.providers);
  const asked = [...baseline, ...traced, ...providers];
  const chosen = [...CONTENDERS, ...asked, ...(values.experiments ? EXPERIMENTS : [])].filter(
    (definition) =>
      only === undefined || only.includes(definition.name) || definition === FLOOR || asked.includes(definition),
  );
  // Said out loud: a run without the peer must never pass for one with it.
  const peers = values['no-peer'] ? chosen.filter((definition) => definition.peer) : [];
  for (const peer of peers) log(`leaving out ${peer.name} (--no-peer)`);
  const contenders = chosen.filter((definition) => !peers.includes(definition));
  log(`contenders: ${contenders.map((definition) => definition.name).join(', ')}`);
  return contenders;
}
