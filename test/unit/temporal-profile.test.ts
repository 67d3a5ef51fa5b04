import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { connectionOptions } from '../../src/client/connection.js';

const folder = mkdtempSync(path.join(os.tmpdir(), 'temporal-profile-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const file = path.join(folder, 'temporal.toml');
writeFileSync(
  file,
  [
    '[profile.default]',
    'address = "localhost:7233"',
    '',
    '[profile.prod]',
    'address = "prod.a1b2c.tmprl.cloud:7233"',
    'namespace = "prod.a1b2c"',
    'api_key = "prod-key"',
    '[profile.prod.grpc_meta]',
    'x-tenant = "acme"',
    '',
    '[profile.broken]',
    'address = "http://broken:7233"',
  ].join('\n'),
);

/** The environment of a process that names the file, and nothing else (no HOME: no default file either). */
const envWith = (variables: Record<string, string>) => ({ TEMPORAL_CONFIG_FILE: file, ...variables });

describe('connection settings from temporal.toml (@temporalio/envconfig)', () => {
  it('profile: TEMPORAL_PROFILE picks the profile; its address, namespace, API key (TLS on) and gRPC headers apply', async () => {
    const { temporal } = loadConfig(envWith({ TEMPORAL_PROFILE: 'prod' }));
    expect(temporal).toMatchObject({
      address: 'prod.a1b2c.tmprl.cloud:7233',
      namespace: 'prod.a1b2c',
      apiKey: 'prod-key',
      tls: true,
      metadata: { 'x-tenant': 'acme' },
    });
    expect(await connectionOptions(temporal)).toMatchObject({ tls: true, metadata: { 'x-tenant': 'acme' } });
  });

  it('profile: the default profile applies without TEMPORAL_PROFILE', () => {
    expect(loadConfig(envWith({})).temporal).toMatchObject({
      address: 'localhost:7233',
      namespace: 'default',
      tls: false,
    });
  });

  it('profile: the documented variables win over the profile', () => {
    const { temporal } = loadConfig(
      envWith({
        TEMPORAL_PROFILE: 'prod',
        TEMPORAL_ADDRESS: 'other:7233',
        TEMPORAL_NAMESPACE: 'other',
        TEMPORAL_TLS: 'false',
        TEMPORAL_GRPC_META_X_TENANT: 'globex',
      }),
    );
    expect(temporal).toMatchObject({
      address: 'other:7233',
      namespace: 'other',
      tls: false,
      metadata: { 'x-tenant': 'globex' },
    });
  });

  it('profile: a profile the file lacks is a ConfigError naming TEMPORAL_PROFILE and the file', () => {
    expect(() => loadConfig(envWith({ TEMPORAL_PROFILE: 'staging' }))).toThrow(ConfigError);
    expect(() => loadConfig(envWith({ TEMPORAL_PROFILE: 'staging' }))).toThrow(
      /profile "staging" \(TEMPORAL_PROFILE\) from .*temporal\.toml \(TEMPORAL_CONFIG_FILE\)/,
    );
  });

  it('profile: a bad address in the profile is a ConfigError naming the profile and the file, and the shape', () => {
    expect(() => loadConfig(envWith({ TEMPORAL_PROFILE: 'broken' }))).toThrow(
      /Invalid address "http:\/\/broken:7233" in the profile "broken" of .*temporal\.toml \(a URL, not host:port/,
    );
  });

  it('profile: a bad TEMPORAL_ADDRESS is still a ConfigError naming the variable', () => {
    expect(() => loadConfig(envWith({ TEMPORAL_ADDRESS: 'localhost' }))).toThrow(
      /Invalid TEMPORAL_ADDRESS="localhost"/,
    );
  });
});
