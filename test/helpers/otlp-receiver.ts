import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

/**
 * An OTLP/HTTP receiver for tests: what a collector's `otlp` receiver accepts on port 4318 (`/v1/traces`,
 * `/v1/metrics`, protobuf or JSON), decoded with the OpenTelemetry protobuf definitions that the exporters themselves
 * encode with (@opentelemetry/otlp-transformer), and kept in memory as plain spans and metric points.
 */

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  startNanos: bigint;
  endNanos: bigint;
  serviceName: unknown;
}

export interface ReceivedMetricPoint {
  name: string;
  attributes: Record<string, unknown>;
  /** A sum's or gauge's value, a histogram's count. */
  value: number;
  /** A histogram's sum of recorded values; absent for sums and gauges. */
  sum?: number;
}

export interface OtlpReceiver {
  /** The base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it. */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  readonly metrics: ReceivedMetricPoint[];
  /** Requests that could not be decoded: a test fails on any. */
  readonly refused: string[];
  close(): Promise<void>;
}

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: object): unknown;
}
const generated = createRequire(import.meta.url)('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: Record<'trace' | 'metrics', { v1: Record<string, ProtoType> }> } };
};
const { collector } = generated.opentelemetry.proto;
const TRACES = collector.trace.v1.ExportTraceServiceRequest!;
const METRICS = collector.metrics.v1.ExportMetricsServiceRequest!;

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean } & {
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value?: AnyValue };

function valueOf(value: AnyValue | undefined): unknown {
  if (value === undefined) return undefined;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));
}

/** Protobuf ids arrive as bytes (base64 once converted), JSON ids as hex already. */
function hexId(id: string | undefined, json: boolean): string {
  if (id === undefined || id === '') return '';
  return json ? id : Buffer.from(id, 'base64').toString('hex');
}

type Decoded = {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: KeyValue[];
        status?: { code?: number | string };
        startTimeUnixNano: string;
        endTimeUnixNano: string;
      }[];
    }[];
  }[];
  resourceMetrics?: {
    scopeMetrics?: {
      metrics?: ({ name: string } & Partial<
        Record<
          'sum' | 'gauge' | 'histogram',
          {
            dataPoints?: { attributes?: KeyValue[]; asInt?: string; asDouble?: number; count?: string; sum?: number }[];
          }
        >
      >)[];
    }[];
  }[];
};

function decode(type: ProtoType, body: Buffer, json: boolean): Decoded {
  if (json) return JSON.parse(body.toString('utf8')) as Decoded;
  return type.toObject(type.decode(body), { longs: String, bytes: String, enums: Number, defaults: false }) as Decoded;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const metrics: ReceivedMetricPoint[] = [];
  const refused: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const json = (request.headers['content-type'] ?? '').includes('json');
      try {
        if (request.url === '/v1/traces') keepSpans(decode(TRACES, body, json), json);
        else if (request.url === '/v1/metrics') keepMetrics(decode(METRICS, body, json));
        else throw new Error(`no OTLP path ${request.url}`);
        response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' });
        response.end(json ? '{}' : undefined);
      } catch (error) {
        refused.push(`${request.url}: ${String(error)}`);
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  function keepSpans(decoded: Decoded, json: boolean): void {
    for (const resourceSpans of decoded.resourceSpans ?? []) {
      const serviceName = attributesOf(resourceSpans.resource?.attributes)['service.name'];
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          spans.push({
            name: span.name,
            traceId: hexId(span.traceId, json),
            spanId: hexId(span.spanId, json),
            parentSpanId: hexId(span.parentSpanId, json),
            attributes: attributesOf(span.attributes),
            statusCode: Number(span.status?.code ?? 0),
            startNanos: BigInt(span.startTimeUnixNano),
            endNanos: BigInt(span.endTimeUnixNano),
            serviceName,
          });
        }
      }
    }
  }

  function keepMetrics(decoded: Decoded): void {
    for (const resourceMetrics of decoded.resourceMetrics ?? []) {
      for (const scope of resourceMetrics.scopeMetrics ?? []) {
        for (const metric of scope.metrics ?? []) {
          const data = metric.sum ?? metric.gauge ?? metric.histogram;
          for (const point of data?.dataPoints ?? []) {
            metrics.push({
              name: metric.name,
              attributes: attributesOf(point.attributes),
              value: Number(point.count ?? point.asInt ?? point.asDouble ?? 0),
              ...(metric.histogram === undefined ? {} : { sum: Number(point.sum ?? 0) }),
            });
          }
        }
      }
    }
  }

  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    metrics,
    refused,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
