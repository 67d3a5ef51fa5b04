import { sleep, workflowInfo } from '@temporalio/workflow';

/** Sleeps for 30 days: only finishes in seconds if the server really skips time. */
export async function sleepThirtyDays(): Promise<string> {
  const startedAt = Date.now();
  await sleep('30 days');
  return `slept ${Math.round((Date.now() - startedAt) / 86_400_000)} days`;
}

/** The smallest workflow that proves a real worker picked up a task. */
export async function greet(name: string): Promise<string> {
  return `Hello, ${name}, from ${workflowInfo().workflowType}`;
}
