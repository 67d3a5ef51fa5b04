import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config/index.js';
import { readTelemetrySettings } from '../../src/client/telemetry/settings.js';

describe('telemetry settings from the OpenTelemetry environment', () => {
  it('settings: nothing starts without an OTLP endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(readTelemetrySettings({})).toBeUndefined();
    expect(
      readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4318', OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
  });

  it('settings: the common endpoint gets each signal its path; a signal endpoint is used as given', () => {
    expect(readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toMatchObject({
      serviceName: 'durable-agent',
      tracesUrl: 'http://collector:4318/v1/traces',
      tracesProtocol: 'http/protobuf',
      metricsUrl: 'http://collector:4318/v1/metrics',
      metricsIntervalMs: 60_000,
      conversationsIntervalMs: 60_000,
      captureContent: false,
    });
    expect(
      readTelemetrySettings({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'support-agent',
      }),
    ).toMatchObject({
      serviceName: 'support-agent',
      tracesUrl: 'https://traces.example/otlp',
      tracesProtocol: 'http/json',
      metricsUrl: undefined,
    });
    expect(
      readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' }),
    ).toMatchObject({ tracesUrl: undefined, metricsUrl: 'http://collector:4318/v1/metrics' });
  });

  it('settings: grpc, a URL without a scheme and a bad interval are errors that say what to set', () => {
    const grpc = () =>
      readTelemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      });
    expect(grpc).toThrow(ConfigError);
    expect(grpc).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL="grpc".*http\/protobuf or http\/json.*4318/);
    expect(() => readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(
      /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": expected an http:\/\/ or https:\/\/ URL/,
    );
    expect(() =>
      readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRIC_EXPORT_INTERVAL: 'soon' }),
    ).toThrow(/OTEL_METRIC_EXPORT_INTERVAL="soon"/);
    expect(() =>
      readTelemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        DURABLE_AGENT_OTEL_CONVERSATIONS_INTERVAL: '0.5',
      }),
    ).toThrow(/DURABLE_AGENT_OTEL_CONVERSATIONS_INTERVAL="0.5": expected seconds .* a whole number of 1 or more/);
  });

  it('settings: conversations are counted every DURABLE_AGENT_OTEL_CONVERSATIONS_INTERVAL seconds', () => {
    expect(
      readTelemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        DURABLE_AGENT_OTEL_CONVERSATIONS_INTERVAL: '15',
      }),
    ).toMatchObject({ conversationsIntervalMs: 15_000 });
  });
});
