import { createServer } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { retryDelayMs, toModelFailure } from '../../src/worker/activities/model/errors.js';
import { FailureType } from '../../src/shared/errors.js';
import {
  startScriptedModel,
  type ScriptedHttpError,
  type ScriptedModel,
} from '../../src/testing/scripted-model/index.js';

const started: ScriptedModel[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((model) => model.close()));
});

/** What the real `openai` client throws when it calls `baseURL`, as the model activity makes it (no retries). */
async function errorFrom(baseURL: string): Promise<unknown> {
  const client = new OpenAI({ baseURL, apiKey: 'test', maxRetries: 0 });
  try {
    await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'Hi' }] });
  } catch (error) {
    return error;
  }
  throw new Error(`expected the call to ${baseURL} to fail`);
}

/** The scripted model answers once with `error`; the real client's exception goes through toModelFailure. */
async function failureFor(error: ScriptedHttpError): Promise<{ failure: ApplicationFailure; model: ScriptedModel }> {
  const model = await startScriptedModel({ script: [{ error }] });
  started.push(model);
  const thrown = await errorFrom(model.baseUrl);
  expect(model.requests.map((request) => request.status)).toEqual([error.status]);
  return { failure: toModelFailure(thrown, model.baseUrl), model };
}

function openAiError(message: string, code: string | null, type = 'invalid_request_error') {
  return { error: { message, type, param: null, code } };
}

describe('toModelFailure: rate limits and quota', () => {
  it('model errors: a 429 with retry-after-ms is a retryable ModelRateLimited retried after that many ms', async () => {
    const { failure, model } = await failureFor({ status: 429, headers: { 'retry-after-ms': '1500' } });

    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure.type).toBe(FailureType.ModelRateLimited);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(1500);
    expect(failure.message).toContain(`HTTP 429 rate_limit_exceeded from ${model.baseUrl}`);
    expect(failure.details).toEqual([{ status: 429, code: 'rate_limit_exceeded' }]);
  });

  it('model errors: a 429 with retry-after in seconds is retried after that many seconds', async () => {
    const { failure } = await failureFor({ status: 429, headers: { 'retry-after': '7' } });

    expect(failure.type).toBe(FailureType.ModelRateLimited);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(7_000);
  });

  it('model errors: retry-after-ms wins over retry-after', async () => {
    const { failure } = await failureFor({ status: 429, headers: { 'retry-after-ms': '250', 'retry-after': '30' } });
    expect(failure.nextRetryDelay).toBe(250);
  });

  it('model errors: a 429 without retry headers leaves the delay to the retry policy', async () => {
    const { failure } = await failureFor({ status: 429 });

    expect(failure.type).toBe(FailureType.ModelRateLimited);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  it('model errors: a 429 insufficient_quota is a non-retryable ModelQuotaExceeded that says to check billing', async () => {
    const { failure } = await failureFor({
      status: 429,
      headers: { 'retry-after': '1' },
      body: openAiError('You exceeded your current quota.', 'insufficient_quota', 'insufficient_quota'),
    });

    expect(failure.type).toBe(FailureType.ModelQuotaExceeded);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.nextRetryDelay).toBeUndefined();
    expect(failure.message).toContain('You exceeded your current quota.');
    expect(failure.message).toContain('The account is out of quota: check billing, then send again.');
  });
});

describe('toModelFailure: server errors, timeouts and conflicts retry', () => {
  it.each([500, 502, 503])('model errors: a %i is a retryable ModelServerError', async (status) => {
    const { failure } = await failureFor({ status });

    expect(failure.type).toBe(FailureType.ModelServerError);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain(`HTTP ${status}`);
  });

  it('model errors: a 503 with retry-after is retried after it', async () => {
    const { failure } = await failureFor({ status: 503, headers: { 'retry-after': '2' } });
    expect(failure.nextRetryDelay).toBe(2_000);
  });

  it('model errors: a 408 is a retryable ModelTimeout', async () => {
    const { failure } = await failureFor({ status: 408 });

    expect(failure.type).toBe(FailureType.ModelTimeout);
    expect(failure.nonRetryable).toBe(false);
  });

  it('model errors: a 409 is a retryable ModelConflict', async () => {
    const { failure } = await failureFor({ status: 409 });

    expect(failure.type).toBe(FailureType.ModelConflict);
    expect(failure.nonRetryable).toBe(false);
  });
});

describe('toModelFailure: requests a person must fix are not retried', () => {
  it('model errors: a 400 is a non-retryable ModelBadRequest that says repeating will not help', async () => {
    const { failure } = await failureFor({
      status: 400,
      body: openAiError("Invalid value for 'temperature'.", 'invalid_value'),
    });

    expect(failure.type).toBe(FailureType.ModelBadRequest);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain("Invalid value for 'temperature'.");
    expect(failure.message).toContain('it will not succeed if repeated');
    expect(failure.details).toEqual([{ status: 400, code: 'invalid_value' }]);
  });

  it('model errors: a 400 context_length_exceeded says to set settings.maxInputTokens', async () => {
    const { failure } = await failureFor({
      status: 400,
      body: openAiError("This model's maximum context length is 128000 tokens.", 'context_length_exceeded'),
    });

    expect(failure.type).toBe(FailureType.ModelContextLengthExceeded);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('settings.maxInputTokens');
  });

  it('model errors: a 400 without a code that mentions the context window is also ModelContextLengthExceeded', async () => {
    const { failure } = await failureFor({
      status: 400,
      body: openAiError('Input exceeds the context window of this model.', null),
    });
    expect(failure.type).toBe(FailureType.ModelContextLengthExceeded);
  });

  it('model errors: a 400 content_filter is a non-retryable ModelContentFiltered', async () => {
    const { failure } = await failureFor({ status: 400, body: openAiError('Blocked.', 'content_filter') });

    expect(failure.type).toBe(FailureType.ModelContentFiltered);
    expect(failure.nonRetryable).toBe(true);
  });

  it('model errors: a 401 is a non-retryable ModelAuthentication that says to check OPENAI_API_KEY', async () => {
    const { failure } = await failureFor({ status: 401 });

    expect(failure.type).toBe(FailureType.ModelAuthentication);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('Check OPENAI_API_KEY.');
  });

  it('model errors: a 403 is a non-retryable ModelPermissionDenied that says the key may not use the model', async () => {
    const { failure } = await failureFor({ status: 403 });

    expect(failure.type).toBe(FailureType.ModelPermissionDenied);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('The API key may not use this model.');
  });

  it('model errors: a 404 is a non-retryable ModelNotFound that names DURABLE_AGENT_MODEL and OPENAI_BASE_URL', async () => {
    const { failure } = await failureFor({ status: 404 });

    expect(failure.type).toBe(FailureType.ModelNotFound);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toContain('DURABLE_AGENT_MODEL');
    expect(failure.message).toContain('OPENAI_BASE_URL');
  });

  it('model errors: a non-retryable failure carries no retry delay even when the server sent one', async () => {
    const { failure } = await failureFor({ status: 401, headers: { 'retry-after-ms': '100' } });
    expect(failure.nextRetryDelay).toBeUndefined();
  });
});

describe('toModelFailure: a rejected tool is named by its server', () => {
  const offered = [
    { name: 'crm__find_user', server: 'crm', originalName: 'find_user' },
    { name: 'thinking__sequentialthinking', server: 'thinking', originalName: 'sequentialthinking' },
  ];

  async function thrownFor(error: ScriptedHttpError): Promise<{ thrown: unknown; model: ScriptedModel }> {
    const model = await startScriptedModel({ script: [{ error }] });
    started.push(model);
    return { thrown: await errorFrom(model.baseUrl), model };
  }

  it("model errors: a 400 naming tools[1] names that tool's server__tool, its name on the server and its MCP server", async () => {
    const message =
      "Invalid 'tools[1].function.description': string too long. Expected a string with maximum length 1024, " +
      'but got a string with length 2781 instead.';
    const { thrown, model } = await thrownFor({
      status: 400,
      body: {
        error: {
          message,
          type: 'invalid_request_error',
          param: 'tools[1].function.description',
          code: 'string_above_max_length',
        },
      },
    });

    const failure = toModelFailure(thrown, model.baseUrl, offered);

    expect(failure.type).toBe(FailureType.ModelBadRequest);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe(
      `HTTP 400 string_above_max_length from ${model.baseUrl}: 400 ${message} ` +
        '(tools[1] is thinking__sequentialthinking, the tool "sequentialthinking" of the MCP server "thinking") ' +
        "The model provider refused that tool's definition: fix it on its MCP server, or leave it out with the " +
        "server's denyTools.",
    );
    expect(failure.details).toEqual([
      {
        status: 400,
        code: 'string_above_max_length',
        tools: [{ index: 1, name: 'thinking__sequentialthinking', server: 'thinking' }],
      },
    ]);
  });

  it('model errors: a tools[N] only in the error param (a schema error) is named too', async () => {
    const { thrown, model } = await thrownFor({
      status: 400,
      body: {
        error: {
          message:
            "Invalid schema for function 'crm__find_user': In context=('properties', 'ids'), array schema missing items.",
          type: 'invalid_request_error',
          param: 'tools[0].function.parameters',
          code: 'invalid_function_parameters',
        },
      },
    });
    const failure = toModelFailure(thrown, model.baseUrl, offered);
    expect(failure.message).toContain('(tools[0] is crm__find_user, the tool "find_user" of the MCP server "crm")');
  });

  it('model errors: an index past the offered list, or no list, leaves the message as the provider wrote it', async () => {
    const body = openAiError("Invalid 'tools[7].function.name': string does not match pattern.", 'invalid_value');
    const { thrown, model } = await thrownFor({ status: 400, body });
    for (const tools of [offered, []]) {
      const failure = toModelFailure(thrown, model.baseUrl, tools);
      expect(failure.message).not.toContain('MCP server');
      expect(failure.message).toContain('it will not succeed if repeated');
      expect(failure.details).toEqual([{ status: 400, code: 'invalid_value' }]);
    }
  });
});

describe('toModelFailure: x-should-retry overrides the status', () => {
  it('model errors: x-should-retry: true makes a 400 retryable, keeping its type and the retry delay', async () => {
    const { failure } = await failureFor({
      status: 400,
      headers: { 'x-should-retry': 'true', 'retry-after-ms': '40' },
    });

    expect(failure.type).toBe(FailureType.ModelBadRequest);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(40);
  });

  it('model errors: x-should-retry: false makes a 500 non-retryable', async () => {
    const { failure } = await failureFor({ status: 500, headers: { 'x-should-retry': 'false' } });

    expect(failure.type).toBe(FailureType.ModelServerError);
    expect(failure.nonRetryable).toBe(true);
  });
});

describe('toModelFailure: failures without an HTTP answer', () => {
  it('model errors: a refused connection is a retryable ModelConnectionError that says to check OPENAI_BASE_URL', async () => {
    // A port that was free a moment ago and has nothing listening now.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const baseUrl = `http://127.0.0.1:${port}/v1`;

    const failure = toModelFailure(await errorFrom(baseUrl), baseUrl);

    expect(failure.type).toBe(FailureType.ModelConnectionError);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain(`Could not reach the model endpoint ${baseUrl}`);
    expect(failure.message).toContain('Check OPENAI_BASE_URL and that the server is running.');
  });

  it('model errors: an ApplicationFailure passes through unchanged', () => {
    const original = ApplicationFailure.create({ type: FailureType.TranscriptUnavailable, message: 'gone' });
    expect(toModelFailure(original, 'http://model')).toBe(original);
  });

  it('model errors: anything else is a retryable ModelInvalidResponse that keeps the original message', () => {
    const failure = toModelFailure(new TypeError('Cannot read properties of undefined'), 'http://model');

    expect(failure.type).toBe(FailureType.ModelInvalidResponse);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe('The model call failed: Cannot read properties of undefined');
  });
});

describe('retryDelayMs', () => {
  const now = Date.parse('2030-01-01T00:00:00Z');

  it('model errors: no headers, or none of the retry headers, means no delay', () => {
    expect(retryDelayMs(undefined, now)).toBeUndefined();
    expect(retryDelayMs(new Headers({ 'content-type': 'application/json' }), now)).toBeUndefined();
  });

  it('model errors: retry-after-ms is milliseconds, retry-after is seconds, possibly fractional', () => {
    expect(retryDelayMs(new Headers({ 'retry-after-ms': '1500' }), now)).toBe(1500);
    expect(retryDelayMs(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
    expect(retryDelayMs(new Headers({ 'retry-after': '0' }), now)).toBe(0);
  });

  it('model errors: an invalid or negative retry-after-ms falls back to retry-after', () => {
    expect(retryDelayMs(new Headers({ 'retry-after-ms': 'soon', 'retry-after': '3' }), now)).toBe(3_000);
    expect(retryDelayMs(new Headers({ 'retry-after-ms': '-5', 'retry-after': '3' }), now)).toBe(3_000);
  });

  it('model errors: retry-after as an HTTP date is the time until then, and zero once it has passed', () => {
    expect(retryDelayMs(new Headers({ 'retry-after': 'Tue, 01 Jan 2030 00:00:10 GMT' }), now)).toBe(10_000);
    expect(retryDelayMs(new Headers({ 'retry-after': 'Mon, 31 Dec 2029 23:59:00 GMT' }), now)).toBe(0);
  });

  it('model errors: an unreadable retry-after means no delay', () => {
    expect(retryDelayMs(new Headers({ 'retry-after': 'later, perhaps' }), now)).toBeUndefined();
  });
});
