import type { CostSpend } from './types.js';

/**
 * A cost in US dollars for people (the CLI, the Web UI's details): `$0.0123`, to the millionth below a cent;
 * `$0.0123 + 2 unpriced` when some calls had no price (so the sum is a floor); `-` when none is known.
 */
export function formatCost(cost: CostSpend | undefined): string {
  if (cost === undefined) return '-';
  const dollars = `$${cost.usd.toFixed(cost.usd !== 0 && cost.usd < 0.01 ? 6 : 4)}`;
  return cost.unpricedCalls ? `${dollars} + ${cost.unpricedCalls} unpriced` : dollars;
}
