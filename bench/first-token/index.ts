import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DurableAgentClient } from '../../src/client/durable-agent-client.js';
import { loadTemporalConfig } from '../../src/config/index.js';
import { conversationWorkflowId } from '../../src/workflows/definitions.js';
import { log } from '../log.js';
import type { FirstTokenPlan } from '../plan.js';
import type { FirstTokenFigures } from '../results.js';
import type { RunContext, Workbench } from '../workbench.js';
import { promptOf, type TurnSpec } from '../workload.js';
import { BridgeProcess } from './bridge.js';
import { firstTokenFigures, type FirstTokenSample, type Route } from './figures.js';
import { epochMs, watchEventStream, watchSubscription } from './watches.js';

/**
 * Time to first token through durable-agent: a conversation is open and watched by one viewer, every other turn a
 * client subscribed through the client API (`subscribe`) and a browser on `durable-agent serve` (server-sent events);
 * once the viewer's poll waits in the workflow the user's message is sent (`DurableAgentClient.send`), and the scripted
 * model streams its answer word by word after a delay, as a hosted model does. The viewer's time from sending to its
 * first `text_delta` is compared with the model's own time to first token (its request's arrival to its first text
 * leaving, stamped by the model server), in one process and on one clock.
 */

/** The contender measured: durable-agent as users run it (plain payloads). */
const CONTENDER = 'durable-agent';
/** How often to look whether the viewer's poll waits in the workflow yet, as an open page's would before the user sends. */
const READY_CHECK_MS = 100;
/**
 * Once the poll waits, the message goes after a random pause up to this long: people do not send at the same
 * instant, and conversations started together would otherwise send together every time.
 */
const SEND_JITTER_MS = 500;
/** A turn that has not finished by then fails the level. */
const TURN_TIMEOUT_MS = 60_000;
/** Turns run, one at a time, before anything is measured: the bridge's and the client's first connections. */
const WARMUP_TURNS = 2;

interface Session {
  workbench: Workbench;
  agent: DurableAgentClient;
  bridge: BridgeProcess;
  spec: TurnSpec;
}

export async function measureFirstToken(run: RunContext, plan: FirstTokenPlan): Promise<FirstTokenFigures[]> {
  const contender = run.running.find((running) => running.definition.name === CONTENDER);
  if (contender === undefined || run.failed.has(CONTENDER)) {
    log(`first token: not measured (${CONTENDER} is not running)`);
    return [];
  }
  const { workbench } = run;
  const target = { address: workbench.env.address, namespace: workbench.namespace, taskQueue: `bench-${CONTENDER}` };
  const agent = await DurableAgentClient.connect({
    temporal: loadTemporalConfig({ TEMPORAL_ADDRESS: target.address, TEMPORAL_NAMESPACE: target.namespace }),
    taskQueue: target.taskQueue,
    encryptionKeys: [],
  });
  let bridge: BridgeProcess | undefined;
  const figures: FirstTokenFigures[] = [];
  try {
    bridge = await BridgeProcess.start(target);
    const session: Session = {
      workbench,
      agent,
      bridge,
      spec: { chain: 0, modelDelayMs: plan.modelDelayMs, chunkDelayMs: plan.chunkDelayMs },
    };
    log(`first token: warming up (${WARMUP_TURNS} turns)`);
    await runTurns(session, 1, WARMUP_TURNS);
    for (const level of plan.levels) {
      log(`first token: ${level.turns} turns, ${level.concurrency} at a time`);
      try {
        const samples = await runTurns(session, level.concurrency, level.turns);
        figures.push(firstTokenFigures(CONTENDER, plan, level.concurrency, samples));
      } catch (error) {
        run.problems.push(`${CONTENDER}: first token at concurrency ${level.concurrency} failed: ${String(error)}`);
      }
    }
  } catch (error) {
    run.problems.push(`${CONTENDER}: first token could not be measured: ${String(error)}`);
  } finally {
    await bridge?.close();
    await agent.close();
    workbench.model.reset();
  }
  return figures;
}

/** `turns` conversations of one turn each, `concurrency` at a time. */
async function runTurns(session: Session, concurrency: number, turns: number): Promise<FirstTokenSample[]> {
  const samples: FirstTokenSample[] = [];
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < turns; index = next++) {
      samples.push(await oneTurn(session, index % 2 === 0 ? 'client' : 'serve'));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, turns) }, lane));
  return samples;
}

async function oneTurn({ workbench, agent, bridge, spec }: Session, route: Route): Promise<FirstTokenSample> {
  const conversationId = `first-token-${randomUUID().slice(0, 8)}`;
  await agent.start(conversationId);
  const controller = new AbortController();
  const timeout = setTimeout(() => controller.abort(new Error('the turn did not finish within 60 s')), TURN_TIMEOUT_MS);
  try {
    const watch =
      route === 'client'
        ? watchSubscription(agent.client, conversationId, controller.signal)
        : watchEventStream(bridge.url, conversationId, controller.signal);
    await watch.opened;
    await pollWaiting(agent, conversationId, controller.signal);
    await sleep(Math.random() * SEND_JITTER_MS);
    const sentMs = epochMs();
    await agent.send(conversationId, promptOf(spec));
    const firstTokenMs = await watch.firstTextMs;
    await watch.finished;
    const request = workbench.model
      .requestsFor(conversationWorkflowId(conversationId))
      .find((recorded) => recorded.timing.firstTextMs !== null);
    if (request?.timing.firstTextMs == null) {
      throw new Error(`the scripted model sent no text to ${conversationId}`);
    }
    const { receivedMs, firstTextMs } = request.timing;
    return {
      route,
      toModelMs: receivedMs - sentMs,
      modelMs: firstTextMs - receivedMs,
      firstTokenMs: firstTokenMs - sentMs,
    };
  } finally {
    clearTimeout(timeout);
    controller.abort();
    await agent.end(conversationId);
  }
}

/** Until the conversation's history has a `pollEvents` update accepted: the viewer's poll waits for events. */
async function pollWaiting(agent: DurableAgentClient, conversationId: string, signal: AbortSignal): Promise<void> {
  const handle = agent.client.workflow.getHandle(conversationWorkflowId(conversationId));
  for (;;) {
    const history = await handle.fetchHistory();
    if (history.events?.some((event) => event.workflowExecutionUpdateAcceptedEventAttributes)) return;
    await sleep(READY_CHECK_MS, undefined, { signal });
  }
}
