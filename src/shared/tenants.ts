/**
 * Tenants (docs/tenants.md): the customer a conversation belongs to. The tenant id is the conversation's fairness key
 * on the task queue, the value of its `DurableAgentTenant` search attribute and the key of its spend ledger.
 */

/** Temporal's limit on a fairness key, in UTF-8 bytes; a tenant id is one, so it has the same limit. */
export const MAX_TENANT_BYTES = 64;

/** What a tenant id looks like, for errors that refuse one. */
export const TENANT_SHAPE =
  `1 to ${MAX_TENANT_BYTES} bytes of UTF-8 (Temporal's fairness key limit) with no whitespace or control characters, ` +
  'such as acme or team-42';

/** What is wrong with a tenant id, or undefined when nothing is. */
export function tenantProblem(tenant: unknown): string | undefined {
  if (typeof tenant !== 'string') return `${JSON.stringify(tenant)} is not a string`;
  if (tenant === '') return 'it is empty';
  const bytes = new TextEncoder().encode(tenant).length;
  if (bytes > MAX_TENANT_BYTES) return `it has ${bytes} bytes, more than ${MAX_TENANT_BYTES}`;
  // eslint-disable-next-line no-control-regex -- control characters are what this refuses
  if (/[\s\u0000-\u001f\u007f]/.test(tenant)) return 'it holds whitespace or a control character';
  return undefined;
}

/** The UTC day of a time, `YYYY-MM-DD`: the period a tenant's spend is kept by. */
export function utcDay(time: Date | number): string {
  return new Date(time).toISOString().slice(0, 10);
}
