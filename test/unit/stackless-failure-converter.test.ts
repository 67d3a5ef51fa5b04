import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import {
  ApplicationFailure,
  defaultPayloadConverter,
  type FailureConverter,
  type ProtoFailure,
} from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { FailureType } from '../../src/shared/errors.js';
import { machinePathsIn } from '../helpers/machine-paths.js';

const modulePath = fileURLToPath(new URL('../../src/codec/stackless-failure-converter.cjs', import.meta.url));
// As Temporal loads a failure converter: require() by path.
const loaded = createRequire(import.meta.url)(modulePath) as {
  failureConverter: FailureConverter;
  StacklessFailureConverter: new (options?: { encodeCommonAttributes?: boolean }) => FailureConverter;
};

/** A failure and its causes, outermost first. */
function chain(failure: ProtoFailure | null | undefined): ProtoFailure[] {
  return failure ? [failure, ...chain(failure.cause)] : [];
}

/** An unexpected error, thrown from this file: its stack names this checkout. */
function unexpectedError(): Error {
  const socket = new Error('socket hang up');
  return new TypeError('Cannot read properties of undefined', { cause: socket });
}

describe('the stackless failure converter', () => {
  it('drops the stack trace of a failure and of each of its causes, keeping messages, types and retryability', () => {
    const error = ApplicationFailure.create({
      type: FailureType.ToolTransportError,
      message: 'The MCP server notes could not be reached.',
      cause: unexpectedError(),
    });
    expect(machinePathsIn((error.cause as Error).stack ?? '')).not.toEqual([]);

    const failure = loaded.failureConverter.errorToFailure(error, defaultPayloadConverter);
    expect(chain(failure).map((link) => [link.message, link.stackTrace])).toEqual([
      ['The MCP server notes could not be reached.', ''],
      ['Cannot read properties of undefined', ''],
      ['socket hang up', ''],
    ]);
    expect(failure.applicationFailureInfo).toMatchObject({ type: FailureType.ToolTransportError, nonRetryable: false });
    expect(machinePathsIn(JSON.stringify(failure))).toEqual([]);
    // The error thrown keeps its stacks for the worker's log.
    expect((error.cause as Error).stack).toContain('unexpectedError');

    const back = loaded.failureConverter.failureToError(failure, defaultPayloadConverter);
    expect(back).toBeInstanceOf(ApplicationFailure);
    expect(back).toMatchObject({ type: FailureType.ToolTransportError, message: error.message });
  });

  it('with encodeCommonAttributes, the encoded payload carries the message and no stack either', () => {
    const converter = new loaded.StacklessFailureConverter({ encodeCommonAttributes: true });
    const failure = converter.errorToFailure(unexpectedError(), defaultPayloadConverter);
    expect(failure).toMatchObject({ message: 'Encoded failure', stackTrace: '' });
    const attributes = defaultPayloadConverter.fromPayload(failure.encodedAttributes!);
    expect(attributes).toEqual({ message: 'Cannot read properties of undefined', stack_trace: '' });
    expect(converter.failureToError(failure, defaultPayloadConverter).message).toBe(
      'Cannot read properties of undefined',
    );
  });
});
