import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { pricedModelCall } from '../../src/worker/activities/model/pricing.js';
import { loadPriceOverrides } from '../../src/worker/pricing/price-overrides.js';
import { loadPriceTable, PriceTable } from '../../src/worker/pricing/price-table.js';
import { FailureType } from '../../src/shared/errors.js';
import type { ModelCallInput, ModelCallResult, TokenUsage } from '../../src/shared/types.js';

const MILLION = 1_000_000;
const directory = mkdtempSync(path.join(os.tmpdir(), 'durable-agent-prices-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function priceFile(name: string, content: string): string {
  const file = path.join(directory, name);
  writeFileSync(file, content);
  return file;
}

function usage(fields: Partial<TokenUsage>): TokenUsage {
  const inputTokens = fields.inputTokens ?? 0;
  const outputTokens = fields.outputTokens ?? 0;
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, ...fields };
}

describe('the price table', () => {
  it('prices: a model of the genai-prices table is priced from it, cached input at the cache-read price', () => {
    // gpt-4o-mini in the table: $0.15 input, $0.075 cached input, $0.60 output per million tokens.
    const cost = new PriceTable().cost(
      usage({ inputTokens: MILLION, outputTokens: MILLION, cacheReadTokens: MILLION / 2 }),
      ['gpt-4o-mini'],
    );

    expect(cost).toEqual({
      priced: true,
      usd: 0.7125,
      inputUsd: 0.1125,
      source: 'genai-prices:openai/gpt-4o-mini',
    });
  });

  it('prices: a configured price wins over the table; cache writes and reads get their own prices', () => {
    const table = new PriceTable({
      'gpt-4o-mini': { input_mtok: 1, output_mtok: 4, cache_read_mtok: 0.1, cache_write_mtok: 1.25 },
    });
    const cost = table.cost(
      usage({
        inputTokens: MILLION,
        outputTokens: MILLION / 2,
        cacheReadTokens: MILLION / 4,
        cacheWriteTokens: MILLION / 4,
      }),
      ['gpt-4o-mini'],
    );

    // Input: 0.5M uncached at $1 + 0.25M read at $0.10 + 0.25M written at $1.25; output: 0.5M at $4.
    expect(cost).toEqual({ priced: true, usd: 2.8375, inputUsd: 0.8375, source: 'configured' });
  });

  it('prices: reasoning tokens are output and priced as output', () => {
    const table = new PriceTable({ thinker: { input_mtok: 1, output_mtok: 10 } });
    const cost = table.cost(usage({ inputTokens: 0, outputTokens: MILLION, reasoningTokens: 900_000 }), ['thinker']);
    expect(cost).toMatchObject({ priced: true, usd: 10 });
  });

  it('prices: a configured model without cache prices pays the input price for cached input', () => {
    const table = new PriceTable({ 'my-model': { input_mtok: 2, output_mtok: 8 } });
    const cost = table.cost(usage({ inputTokens: MILLION, cacheReadTokens: MILLION / 2 }), ['my-model']);
    expect(cost).toMatchObject({ priced: true, usd: 2, inputUsd: 2 });
  });

  it('prices: the name the endpoint answered with is tried when the requested one has no price', () => {
    const cost = new PriceTable().cost(usage({ inputTokens: MILLION }), ['my-alias', 'gpt-4o-mini-2024-07-18']);
    expect(cost).toMatchObject({ priced: true, usd: 0.15, source: 'genai-prices:openai/gpt-4o-mini' });
  });

  it('prices: a model nobody prices is unpriced with the reason, never a cost of zero', () => {
    const table = new PriceTable();
    expect(table.cost(usage({ inputTokens: 10, outputTokens: 10 }), ['scripted-model'])).toEqual({
      priced: false,
      usd: null,
      reason: 'no price for model "scripted-model"',
    });
    expect(table.knows('scripted-model')).toBe(false);
    expect(table.knows('gpt-4o')).toBe(true);
  });
});

describe('the price file', () => {
  it('price file: DURABLE_AGENT_PRICES names it; its prices are read over the table', () => {
    const file = priceFile('ok.json', JSON.stringify({ 'scripted-model': { input_mtok: 3, output_mtok: 15 } }));
    const config = loadConfig({ DURABLE_AGENT_PRICES: file });

    expect(config.pricesPath).toBe(file);
    expect(loadPriceTable(config.pricesPath).cost(usage({ inputTokens: MILLION }), ['scripted-model'])).toMatchObject({
      usd: 3,
      source: 'configured',
    });
    expect(loadConfig({}).pricesPath).toBeUndefined();
  });

  it.each([
    ['missing.json', undefined, /^Cannot read DURABLE_AGENT_PRICES=".*missing\.json" \(ENOENT/],
    [
      'not-json.json',
      '{"a": ',
      /^DURABLE_AGENT_PRICES file .*not-json\.json is not JSON .*: expected a JSON object from model name/,
    ],
    ['array.json', '[]', /^DURABLE_AGENT_PRICES file .*array\.json: expected a JSON object from model name to prices/],
    ['no-output.json', '{"m": {"input_mtok": 1}}', /model "m": "output_mtok" is missing; expected a JSON object/],
    [
      'negative.json',
      '{"m": {"input_mtok": -1, "output_mtok": 1}}',
      /model "m": "input_mtok" is -1; expected a number of at least 0 \(US dollars per million tokens\)/,
    ],
    ['text.json', '{"m": {"input_mtok": "2", "output_mtok": 1}}', /model "m": "input_mtok" is "2"; expected a number/],
    [
      'unknown-key.json',
      '{"m": {"input": 1, "output_mtok": 1}}',
      /model "m": unknown key "input"; the keys are input_mtok, output_mtok, cache_read_mtok, cache_write_mtok/,
    ],
    ['not-object.json', '{"m": 2}', /model "m": expected an object of prices, got 2/],
  ])('price file: %s is a ConfigError that says what is wrong', (name, content, message) => {
    const file = content === undefined ? path.join(directory, name) : priceFile(name, content);
    expect(() => loadPriceOverrides(file)).toThrow(ConfigError);
    expect(() => loadPriceOverrides(file)).toThrow(message);
  });
});

describe('prices given as an option', () => {
  it('prices: a PriceTable checks the prices it is given like a price file', () => {
    const bad = { m: { input_mtok: 1 } } as unknown as ConstructorParameters<typeof PriceTable>[0];
    expect(() => new PriceTable(bad, 'the prices option')).toThrow(ConfigError);
    expect(() => new PriceTable(bad, 'the prices option')).toThrow(
      'the prices option, model "m": "output_mtok" is missing',
    );
  });
});

describe('the pricing step of the model activity', () => {
  const input = { model: 'scripted-model' } as ModelCallInput;
  const answer: ModelCallResult = {
    message: { role: 'assistant', content: 'hi' },
    usage: usage({ inputTokens: 2_000, outputTokens: 1_000 }),
    finishReason: 'stop',
    model: 'scripted-model',
  };

  it('pricing: the result records its cost beside its usage', async () => {
    const prices = new PriceTable({ 'scripted-model': { input_mtok: 1, output_mtok: 2 } });
    const result = await pricedModelCall(prices, input, 'default-model', async () => answer);
    expect(result.cost).toEqual({ priced: true, usd: 0.004, inputUsd: 0.002, source: 'configured' });
    expect(result.usage).toEqual(answer.usage);
  });

  it('pricing: without a cost budget, an unpriced model is called and its result says so', async () => {
    const result = await pricedModelCall(new PriceTable(), input, 'default-model', async () => answer);
    expect(result.cost).toMatchObject({ priced: false, usd: null });
  });

  it('pricing: with a cost budget, an unpriced model is refused before the call, saying how to price it', async () => {
    let called = false;
    const refused = pricedModelCall(new PriceTable(), { ...input, costBudget: true }, 'default-model', async () => {
      called = true;
      return answer;
    });
    await expect(refused).rejects.toMatchObject({
      type: FailureType.ModelUnpriced,
      nonRetryable: true,
      message: expect.stringContaining(
        'has no price for model "scripted-model", so the call was not made. Give the model a price in the ' +
          "worker's DURABLE_AGENT_PRICES file",
      ),
    });
    expect(called).toBe(false);
  });
});
