'use strict';
/**
 * The failure converter of a durable-agent worker, client and workflow bundle with encryption keys set
 * (docs/security.md): Temporal's default converter with `encodeCommonAttributes`, so a failure's message moves into a
 * payload that the encryption codec encrypts, and the failure itself says only "Encoded failure". No failure carries a
 * stack trace (./stackless-failure-converter.cjs).
 * Types (e.g. InvalidMessage), retryability and the failure's kind stay plain: durable-agent reads them.
 *
 * One kind stays readable: the worker's refusal of a client's message it could not decrypt (type UndecodablePayload,
 * raised in src/workflows/undecodable-guard.ts). The client it is meant for has keys that do not match the
 * worker's, so it could not decrypt an encoded message either and would read only "Encoded failure". The refusal
 * names key ids only, which every encrypted payload carries in plain metadata anyway.
 *
 * CommonJS on purpose: Temporal loads it by path with `require()` (`DataConverter.failureConverterPath`) in the
 * worker and the client, from the sources and from dist alike, and bundles the same file into the workflow code.
 */
const { StacklessFailureConverter } = require('./stackless-failure-converter.cjs');

/** FailureType.UndecodablePayload (src/shared/errors.ts); CommonJS cannot import the TypeScript constant. */
const UNDECODABLE_PAYLOAD = 'UndecodablePayload';

// Stackless as without keys: a stack names the worker's files, and an encrypted one is decrypted by every key holder.
const encoding = new StacklessFailureConverter({ encodeCommonAttributes: true });
const plain = new StacklessFailureConverter();

exports.failureConverter = {
  errorToFailure(error, payloadConverter, context) {
    const readable = error && typeof error === 'object' && error.type === UNDECODABLE_PAYLOAD;
    return (readable ? plain : encoding).errorToFailure(error, payloadConverter, context);
  },
  failureToError(failure, payloadConverter, context) {
    return encoding.failureToError(failure, payloadConverter, context);
  },
};
