import { FailureType, expectedFailure } from '../../../shared/errors.js';
import type { ModelCallInput, ModelCallResult } from '../../../shared/types.js';
import type { PriceTable } from '../../pricing/price-table.js';
import { PRICES_VARIABLE } from '../../pricing/price-overrides.js';
import { parseModelName } from './providers/provider.js';

/**
 * The model call with its cost: priced from its usage after the call, so the price is recorded with the result and
 * replay never prices it again. A call that a cost budget limits is refused before it is made when its model has no
 * price: a budget that cannot be counted would let the turn spend without limit.
 */
export async function pricedModelCall(
  prices: PriceTable,
  input: ModelCallInput,
  defaultModel: string,
  call: () => Promise<ModelCallResult>,
): Promise<ModelCallResult> {
  const requested = input.model ?? defaultModel;
  // A provider prefix (`anthropic:`) names the API, not the model: price tables know the model by its own name.
  const names = [requested, parseModelName(requested).model];
  if (input.costBudget && !names.some((name) => prices.knows(name))) {
    throw expectedFailure({
      type: FailureType.ModelUnpriced,
      nonRetryable: true,
      message:
        `The conversation has a cost budget (maxCostUsd) but the worker has no price for model "${requested}", so ` +
        `the call was not made. Give the model a price in the worker's ${PRICES_VARIABLE} file ` +
        `({"${requested}": {"input_mtok": ..., "output_mtok": ...}}, US dollars per million tokens) or remove the ` +
        'cost budget (docs/cost.md).',
    });
  }
  const result = await call();
  return { ...result, cost: prices.cost(result.usage, [...names, result.model]) };
}
