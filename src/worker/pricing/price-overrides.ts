import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config/index.js';

/** The variable that names the worker's price file (docs/cost.md). */
export const PRICES_VARIABLE = 'DURABLE_AGENT_PRICES';

/**
 * One model's prices in US dollars per million tokens, in the names of the `@pydantic/genai-prices` table so that a
 * price copied from it needs no renaming. Cache reads and writes default to the input price.
 */
export interface ModelPrices {
  input_mtok: number;
  output_mtok: number;
  cache_read_mtok?: number;
  cache_write_mtok?: number;
}

const REQUIRED_KEYS = ['input_mtok', 'output_mtok'] as const;
const PRICE_KEYS: readonly string[] = [...REQUIRED_KEYS, 'cache_read_mtok', 'cache_write_mtok'];

export const PRICES_SHAPE =
  'a JSON object from model name to prices in US dollars per million tokens, such as ' +
  '{"my-model": {"input_mtok": 0.5, "output_mtok": 1.5, "cache_read_mtok": 0.05, "cache_write_mtok": 0.6}} ' +
  '(input_mtok and output_mtok required, each a number of at least 0)';

/** The prices of a price file; every problem is a {@link ConfigError} naming the file, the key and the shape. */
export function loadPriceOverrides(file: string): Record<string, ModelPrices> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`Cannot read ${PRICES_VARIABLE}=${JSON.stringify(file)} (${(error as Error).message}).`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `${PRICES_VARIABLE} file ${file} is not JSON (${(error as Error).message}): expected ${PRICES_SHAPE}.`,
    );
  }
  return parsePriceOverrides(parsed, `${PRICES_VARIABLE} file ${file}`);
}

/** Checks prices given as an object (a price file's content, or a worker option); `source` names them in errors. */
export function parsePriceOverrides(value: unknown, source: string): Record<string, ModelPrices> {
  if (!isPlainObject(value)) throw new ConfigError(`${source}: expected ${PRICES_SHAPE}.`);
  const prices: Record<string, ModelPrices> = {};
  for (const [model, entry] of Object.entries(value)) {
    const where = `${source}, model ${JSON.stringify(model)}`;
    if (model.trim() === '') throw new ConfigError(`${source}: a model name is empty; expected ${PRICES_SHAPE}.`);
    if (!isPlainObject(entry))
      throw new ConfigError(`${where}: expected an object of prices, got ${JSON.stringify(entry)}.`);
    for (const key of Object.keys(entry)) {
      if (!PRICE_KEYS.includes(key)) {
        throw new ConfigError(`${where}: unknown key "${key}"; the keys are ${PRICE_KEYS.join(', ')}.`);
      }
    }
    for (const key of REQUIRED_KEYS) {
      if (entry[key] === undefined) throw new ConfigError(`${where}: "${key}" is missing; expected ${PRICES_SHAPE}.`);
    }
    for (const [key, price] of Object.entries(entry)) {
      if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) {
        throw new ConfigError(
          `${where}: "${key}" is ${JSON.stringify(price)}; expected a number of at least 0 (US dollars per million tokens).`,
        );
      }
    }
    prices[model] = entry as unknown as ModelPrices;
  }
  return prices;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
