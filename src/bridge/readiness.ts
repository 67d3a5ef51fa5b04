import type { Client } from '@temporalio/client';
import { errorMessage } from '../shared/errors.js';

/** How long one readiness check may take before Temporal counts as unreachable. */
export const READINESS_DEADLINE_MS = 1_000;
/** How long a readiness answer is reused, so probes do not hammer the cluster. */
export const READINESS_CACHE_MS = 2_000;

export type Readiness = { ready: true } | { ready: false; reason: string };

/**
 * `/readyz`: whether Temporal answers a cheap call (`GetSystemInfo`) within {@link READINESS_DEADLINE_MS}. Answers are
 * cached {@link READINESS_CACHE_MS}; concurrent probes share one call.
 */
export function temporalReadiness(client: Client): () => Promise<Readiness> {
  let cached: { at: number; readiness: Promise<Readiness> } | undefined;
  return () => {
    const now = Date.now();
    if (cached === undefined || now - cached.at > READINESS_CACHE_MS) {
      cached = { at: now, readiness: check(client) };
    }
    return cached.readiness;
  };
}

async function check(client: Client): Promise<Readiness> {
  const { connection } = client;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), READINESS_DEADLINE_MS);
  try {
    await connection.withAbortSignal(controller.signal, () =>
      connection.withDeadline(Date.now() + READINESS_DEADLINE_MS, () => connection.workflowService.getSystemInfo({})),
    );
    return { ready: true };
  } catch (error) {
    const reason = controller.signal.aborted ? `no answer within ${READINESS_DEADLINE_MS} ms` : errorMessage(error);
    return { ready: false, reason };
  } finally {
    clearTimeout(timer);
  }
}
