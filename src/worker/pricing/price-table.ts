import { createRequire } from 'node:module';
import type * as GenaiPrices from '@pydantic/genai-prices';
import type { Provider } from '@pydantic/genai-prices';
import type { ModelCallCost, TokenUsage } from '../../shared/types.js';
import { loadPriceOverrides, type ModelPrices, parsePriceOverrides, PRICES_VARIABLE } from './price-overrides.js';

/** Where a configured price comes from, as a priced call's `source` records it. */
export const CONFIGURED_SOURCE = 'configured';

/**
 * The bundled table is a module of some 30,000 lines, evaluated when it is loaded: it is loaded by the first call
 * priced, not by every process that imports the worker (the CLI, tests, a worker that never calls a model), and then
 * kept. Only its functions are used, so its CommonJS build serves as well as its ES module.
 */
const load = createRequire(import.meta.url);
let table: typeof GenaiPrices | undefined;
function calcPrice(...call: Parameters<typeof GenaiPrices.calcPrice>): ReturnType<typeof GenaiPrices.calcPrice> {
  table ??= load('@pydantic/genai-prices') as typeof GenaiPrices;
  return table.calcPrice(...call);
}

/**
 * Prices per model for the worker: the configured ones (the price file, or an option) first, then the table that
 * `@pydantic/genai-prices` ships inside the package. The table is read from the package only, never from the network,
 * so a worker prices the same call the same way until it is upgraded.
 */
export class PriceTable {
  private readonly configured: Provider;
  private readonly overrides: Readonly<Record<string, ModelPrices>>;
  /**
   * Names the bundled table has no price for. Finding that out walks every provider and model of the table, building
   * regular expressions as it goes (about 0.05 ms a name, two or three names a call, on every call to a local or
   * scripted model); whether a name matches depends on the name only, and the table does not change while the worker
   * runs.
   */
  private readonly unpricedNames = new Set<string>();

  /** `overrides` are checked like a price file; a bad one is a ConfigError that names `source`. */
  constructor(overrides: Readonly<Record<string, ModelPrices>> = {}, source = 'PriceTable prices') {
    this.overrides = parsePriceOverrides(overrides, source);
    this.configured = {
      id: CONFIGURED_SOURCE,
      name: 'configured prices',
      api_pattern: '.*',
      models: Object.entries(this.overrides).map(([model, prices]) => ({
        id: model,
        match: { equals: model },
        // An unset cache price is the input price: a cache that saves nothing rather than a cache that is free.
        prices: {
          ...prices,
          cache_read_mtok: prices.cache_read_mtok ?? prices.input_mtok,
          cache_write_mtok: prices.cache_write_mtok ?? prices.input_mtok,
        },
      })),
    };
  }

  /** Whether a call to `model` can be priced (checked before a call that a cost budget limits). */
  knows(model: string): boolean {
    return this.cost(ZERO_TOKENS, [model]).priced;
  }

  /**
   * What a call cost, priced as the first of `models` that has a price (the requested name, then the name the
   * endpoint answered with). A model without a price is `priced: false` with the reason, never a cost of zero.
   */
  cost(usage: TokenUsage, models: readonly string[]): ModelCallCost {
    const names = [...new Set(models)];
    const tokens = {
      input_tokens: usage.inputTokens,
      output_tokens: usage.outputTokens,
      ...(usage.cacheReadTokens ? { cache_read_tokens: usage.cacheReadTokens } : {}),
      ...(usage.cacheWriteTokens ? { cache_write_tokens: usage.cacheWriteTokens } : {}),
    };
    for (const name of names) {
      if (this.overrides[name] === undefined) continue;
      const price = calcPrice(tokens, name, { provider: this.configured });
      if (price) return priced(price.input_price, price.output_price, CONFIGURED_SOURCE);
    }
    for (const name of names) {
      if (this.unpricedNames.has(name)) continue;
      const price = calcPrice(tokens, name);
      if (price)
        return priced(price.input_price, price.output_price, `genai-prices:${price.provider.id}/${price.model.id}`);
      // Model names come from conversations: bounded, so that clients cannot grow the worker without limit.
      if (this.unpricedNames.size >= MAX_REMEMBERED_NAMES) this.unpricedNames.clear();
      this.unpricedNames.add(name);
    }
    return {
      priced: false,
      usd: null,
      // Short: it is recorded with every call to such a model. docs/cost.md says where prices come from.
      reason: `no price for model ${names.map((name) => JSON.stringify(name)).join(' or ')}`,
    };
  }
}

const MAX_REMEMBERED_NAMES = 1_000;

const ZERO_TOKENS: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };

function priced(inputUsd: number, outputUsd: number, source: string): ModelCallCost {
  return { priced: true, usd: dollars(inputUsd + outputUsd), inputUsd: dollars(inputUsd), source };
}

/** Rounded to a billionth of a dollar: the table's floating-point sums carry noise far below any price. */
function dollars(value: number): number {
  return Math.round(value * 1e9) / 1e9;
}

/** The worker's prices: the file `DURABLE_AGENT_PRICES` names (when set) over the bundled table. */
export function loadPriceTable(pricesPath: string | undefined): PriceTable {
  return pricesPath === undefined
    ? new PriceTable()
    : new PriceTable(loadPriceOverrides(pricesPath), `${PRICES_VARIABLE} file ${pricesPath}`);
}
