'use strict';
/**
 * A failure converter that sends no stack traces: Temporal's default converter, except that every failure it makes
 * (and each of its causes) has an empty `stackTrace`. A stack's frames name files of the machine that threw (the
 * worker's install directory), and a failure travels to every client and stays in the workflow's history. The
 * worker's log keeps the stacks: Temporal logs an activity's error ("Activity failed") before converting it.
 *
 * The failure converter of every durable-agent worker, client and workflow bundle without encryption keys
 * ({@link encryptionDataConverter} names this file); ./failure-converter.cjs builds on it with keys set. CommonJS for the same reason as
 * that module: Temporal loads a failure converter by path with `require()` and bundles it into the workflow code.
 */
const { DefaultFailureConverter } = require('@temporalio/common');

class StacklessFailureConverter extends DefaultFailureConverter {
  errorToFailureInner(error, payloadConverter, context) {
    // Causes come through here too (the default converter converts each with `errorToFailure`).
    return { ...super.errorToFailureInner(error, payloadConverter, context), stackTrace: '' };
  }
}

exports.StacklessFailureConverter = StacklessFailureConverter;
/** For `DataConverter.failureConverterPath` without encryption keys. */
exports.failureConverter = new StacklessFailureConverter();
