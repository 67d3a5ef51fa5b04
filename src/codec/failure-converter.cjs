'use strict';
/**
 * The failure converter of a durable-agent worker, client and workflow bundle with encryption keys set
 * (docs/security.md): Temporal's default converter with `encodeCommonAttributes`, so a failure's message and stack
 * trace move into a payload that the encryption codec encrypts, and the failure itself says only "Encoded failure".
 * Types (e.g. InvalidMessage), retryability and the failure's kind stay plain: durable-agent reads them.
 *
 * CommonJS on purpose: Temporal loads it by path with `require()` (`DataConverter.failureConverterPath`) in the
 * worker and the client, from the sources and from dist alike, and bundles the same file into the workflow code.
 */
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
