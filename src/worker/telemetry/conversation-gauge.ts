import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import type { Logger, MetricMeter } from '@temporalio/common';
import { Runtime, type WorkerPlugin } from '@temporalio/worker';
import { CONVERSATION_QUERIES } from '../../client/list.js';
import { errorMessage } from '../../shared/errors.js';
import { CONVERSATION_PHASES } from '../../workflows/definitions.js';

export interface ConversationGaugeOptions {
  /** Counts in its namespace, through visibility. */
  client: Client;
  /** Where the gauge is recorded: the Temporal Runtime's meter, exported with the worker's other metrics. */
  meter: MetricMeter;
  /** Time between two counts. */
  intervalMs: number;
  /** Where a failed count is reported; the count is skipped and tried again at the next interval. */
  logger: Logger;
}

/** A running count; `stop` cancels the count under way and resolves once nothing runs. */
export interface ConversationGauge {
  stop(): Promise<void>;
}

/**
 * `durable_agent.conversations` by `status`: every `intervalMs`, one `workflow.count()` per value of the
 * `DurableAgentStatus` search attribute, with the queries of `list` (CONVERSATION_QUERIES: open states are asked of
 * running runs only, so a conversation counts once). The five values are set together or not at all, so a gauge never
 * mixes two moments' counts. Visibility is eventually consistent: a count may lag a change by a moment.
 */
export function startConversationGauge(options: ConversationGaugeOptions): ConversationGauge {
  const { client, meter, intervalMs, logger } = options;
  const gauge = meter.createGauge(
    'durable_agent.conversations',
    'int',
    '{conversation}',
    'Conversations by status (the DurableAgentStatus search attribute), counted in visibility',
  );
  const stopping = new AbortController();
  const countOnce = async () => {
    try {
      const counts = await client.withAbortSignal(stopping.signal, () =>
        Promise.all(CONVERSATION_PHASES.map((status) => client.workflow.count(CONVERSATION_QUERIES[status]))),
      );
      CONVERSATION_PHASES.forEach((status, index) => gauge.set(counts[index]!.count, { status }));
    } catch (error) {
      if (stopping.signal.aborted) return;
      logger.warn(
        `Could not count conversations by status for durable_agent.conversations; trying again in ${intervalMs / 1000} s`,
        { error: errorMessage(error) },
      );
    }
  };
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      await countOnce();
      await sleep(intervalMs, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  })();
  return {
    stop: async () => {
      stopping.abort();
      await loop;
    },
  };
}

/**
 * A worker plugin that counts while its worker runs and stops counting when the worker stops, on the Temporal Runtime's
 * meter (exported with the worker's other metrics) and logger.
 */
export function conversationGaugePlugin(
  options: Pick<ConversationGaugeOptions, 'client' | 'intervalMs'>,
): WorkerPlugin {
  return {
    name: 'durable-agent-conversation-gauge',
    runWorker: async (worker, next) => {
      const { metricMeter, logger } = Runtime.instance();
      const gauge = startConversationGauge({ ...options, meter: metricMeter, logger });
      try {
        await next(worker);
      } finally {
        await gauge.stop();
      }
    },
  };
}
