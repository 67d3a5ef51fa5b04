import { ConfigError, readBoolean } from '../../config/index.js';

type Env = Record<string, string | undefined>;

/** The OTLP encodings the exporters here speak; `grpc` would need another exporter package. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/**
 * What the standard OpenTelemetry environment asks for. Read once per process; `undefined` (no endpoint, or
 * `OTEL_SDK_DISABLED=true`) means no SDK starts, no interceptor is added and nothing is exported.
 */
export interface TelemetrySettings {
  /** `service.name` of every span and metric; `OTEL_SERVICE_NAME`, default `durable-agent`. */
  serviceName: string;
  /** Where spans go (OTLP/HTTP), or `undefined` when only metrics were asked for. */
  tracesUrl: string | undefined;
  tracesProtocol: OtlpProtocol;
  /** Where the Temporal Runtime sends its metrics and ours (OTLP/HTTP, protobuf), or `undefined`. */
  metricsUrl: string | undefined;
  /** How often metrics are exported; `OTEL_METRIC_EXPORT_INTERVAL` in milliseconds, default 60000. */
  metricsIntervalMs: number;
  /**
   * How often a worker counts conversations by status for `durable_agent.conversations`;
   * `DURABLE_AGENT_OTEL_CONVERSATIONS_INTERVAL` in seconds, default 60.
   */
  conversationsIntervalMs: number;
  /**
   * Put prompts, answers, tool arguments and tool results on spans (redacted with the worker's secrets);
   * `DURABLE_AGENT_OTEL_CAPTURE_CONTENT`, default false: spans carry ids, names, counts and outcomes only.
   */
  captureContent: boolean;
}

const PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function readProtocol(env: Env, name: string): OtlpProtocol | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  if ((PROTOCOLS as readonly string[]).includes(value)) return value as OtlpProtocol;
  throw new ConfigError(
    `Invalid ${name}=${JSON.stringify(value)}: expected ${PROTOCOLS.join(' or ')} ` +
      '(durable-agent exports OTLP over HTTP; point it at the collector port that speaks HTTP, usually 4318).',
  );
}

/** The URL of one signal: its own variable as given, else the common endpoint with the signal's path appended. */
function signalUrl(env: Env, signal: 'traces' | 'metrics'): string | undefined {
  const own = read(env, `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`);
  const common = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const url = own ?? (common === undefined ? undefined : `${common.replace(/\/+$/, '')}/v1/${signal}`);
  if (url === undefined) return undefined;
  const name =
    own === undefined ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`;
  if (!/^https?:\/\/[^/]/.test(url)) {
    throw new ConfigError(
      `Invalid ${name}=${JSON.stringify(own ?? common)}: expected an http:// or https:// URL, ` +
        'e.g. http://localhost:4318.',
    );
  }
  const exporter = read(env, `OTEL_${signal.toUpperCase()}_EXPORTER`);
  return exporter === 'none' ? undefined : url;
}

/** Read the OpenTelemetry variables (docs/observability.md); a bad value is a ConfigError naming it. */
export function readTelemetrySettings(env: Env = process.env): TelemetrySettings | undefined {
  if (readBoolean(env, 'OTEL_SDK_DISABLED', false)) return undefined;
  const tracesUrl = signalUrl(env, 'traces');
  const metricsUrl = signalUrl(env, 'metrics');
  if (tracesUrl === undefined && metricsUrl === undefined) return undefined;
  const interval = read(env, 'OTEL_METRIC_EXPORT_INTERVAL');
  const metricsIntervalMs = interval === undefined ? 60_000 : Number(interval);
  if (!Number.isInteger(metricsIntervalMs) || metricsIntervalMs < 100) {
    throw new ConfigError(
      `Invalid OTEL_METRIC_EXPORT_INTERVAL=${JSON.stringify(interval)}: expected milliseconds, a whole number of 100 or more.`,
    );
  }
  return {
    conversationsIntervalMs: readConversationsInterval(env),
    serviceName: read(env, 'OTEL_SERVICE_NAME') ?? 'durable-agent',
    tracesUrl,
    tracesProtocol:
      readProtocol(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
      readProtocol(env, 'OTEL_EXPORTER_OTLP_PROTOCOL') ??
      'http/protobuf',
    metricsUrl,
    metricsIntervalMs,
    captureContent: readBoolean(env, 'DURABLE_AGENT_OTEL_CAPTURE_CONTENT', false),
  };
}

const CONVERSATIONS_INTERVAL = 'DURABLE_AGENT_OTEL_CONVERSATIONS_INTERVAL';

function readConversationsInterval(env: Env): number {
  const value = read(env, CONVERSATIONS_INTERVAL);
  if (value === undefined) return 60_000;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1) {
    throw new ConfigError(
      `Invalid ${CONVERSATIONS_INTERVAL}=${JSON.stringify(value)}: expected seconds between two counts of ` +
        'conversations by status, a whole number of 1 or more (default 60).',
    );
  }
  return seconds * 1000;
}
