import type { LogLevel, LogMetadata, Logger } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Redactor } from '../shared/redaction.js';
import { readTelemetrySettings, runtimeTelemetryOptions, type TelemetrySettings } from './telemetry/index.js';

/**
 * The worker's log, redacted (docs/security.md, "What leaves the worker"): every line the Temporal Runtime logs (the
 * SDK's own, sdk-core's, and what activities log through `Context.log`, including "Activity failed" with its error)
 * goes through the worker's {@link Redactor} before it is written.
 */
export class RedactingLogger implements Logger {
  constructor(
    private readonly next: Logger,
    private readonly secrets: Redactor,
  ) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.next.log(level, this.secrets.text(message), meta === undefined ? undefined : this.meta(meta));
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }

  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }

  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }

  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }

  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }

  /** A copy with every value redacted; an error in place (it is on its way out anyway). Symbol keys are kept. */
  private meta(meta: LogMetadata): LogMetadata {
    const copy: LogMetadata = { ...meta };
    for (const [key, value] of Object.entries(copy) as [string, unknown][]) {
      copy[key] = value instanceof Error ? this.secrets.error(value) : this.secrets.value(value);
    }
    return copy;
  }
}

/**
 * Install the Temporal Runtime with the worker's redacting logger (INFO and up, to stderr, as the Runtime's default).
 * Call it before anything creates the Runtime (a worker, a native connection, `Runtime.instance()`). When something
 * did (a server download through the Temporal SDK's test environment), the Runtime there is kept and a warning says
 * that its log is not redacted. When `telemetry` (default: the OpenTelemetry environment) names a metrics endpoint, the Runtime exports its metrics
 * and the worker's (docs/observability.md) there over OTLP/HTTP.
 */
export function installWorkerRuntime(
  secrets: Redactor,
  telemetry: TelemetrySettings | undefined = readTelemetrySettings(),
): Runtime {
  try {
    return Runtime.install({
      logger: new RedactingLogger(new DefaultLogger('INFO'), secrets),
      telemetryOptions: runtimeTelemetryOptions(telemetry),
    });
  } catch (error) {
    const runtime = Runtime.instance();
    runtime.logger.warn(
      `The Temporal Runtime was created before the worker's (${(error as Error).message}): its log is not redacted.`,
    );
    return runtime;
  }
}
