import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import {
  DURABLE_AGENT_DYNAMIC_CONFIG,
  DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS,
  dynamicConfigFlags,
  searchAttributeFlags,
} from '../src/temporal-servers/index.js';
import { load as parseYaml } from 'js-yaml';

interface Service {
  image?: string;
  build?: unknown;
  profiles?: string[];
  command?: string[];
  ports?: string[];
  environment?: Record<string, string | number>;
}

const compose = parseYaml(readFileSync(new URL('../docker-compose.yml', import.meta.url), 'utf8')) as {
  services: Record<string, Service>;
  configs: Record<string, { content?: string; file?: string }>;
};
const services = Object.entries(compose.services);
const workers = services.filter(([, service]) => service.build !== undefined);

/** Every environment variable name src/config/index.ts reads, observed by loading a config from an env that records reads. */
function namesReadByConfig(): Set<string> {
  const names = new Set<string>();
  const env = new Proxy(
    {},
    {
      get(_target, name) {
        if (typeof name === 'string') names.add(name);
        return undefined;
      },
    },
  );
  loadConfig(env);
  return names;
}

const defaults = loadConfig({});

describe('docker-compose.yml', () => {
  test('has a dev and a production profile, each with a worker built from the Dockerfile', () => {
    const profilesOf = (entries: typeof services) => new Set(entries.flatMap(([, service]) => service.profiles ?? []));
    expect(profilesOf(services)).toEqual(new Set(['dev', 'production']));
    expect(profilesOf(workers)).toEqual(new Set(['dev', 'production']));
  });

  test('workers set only environment variables that src/config/index.ts reads', () => {
    const known = namesReadByConfig();
    for (const [name, worker] of workers) {
      const unknown = Object.keys(worker.environment ?? {}).filter((variable) => !known.has(variable));
      expect(unknown, `service ${name}`).toEqual([]);
    }
  });

  test("each worker's TEMPORAL_ADDRESS names a Temporal service of its own profile, on a port that service serves", () => {
    for (const [name, worker] of workers) {
      const address = String(worker.environment?.TEMPORAL_ADDRESS);
      const [host, port] = address.split(':');
      const target = compose.services[host!];
      expect(target, `${name} points at ${address}`).toBeDefined();
      expect(target!.profiles).toEqual(worker.profiles);
      expect(target!.ports?.map((mapping) => mapping.split(':')[1])).toContain(port);
    }
  });

  test('the dev server publishes the ports durable-agent dev uses, and registers the search attributes', () => {
    const devServer = compose.services['temporal-dev']!;
    expect(devServer.image).toMatch(/^temporalio\/temporal:/);
    expect(devServer.ports).toEqual([
      `${defaults.devPort}:${defaults.devPort}`,
      `${defaults.uiPort}:${defaults.uiPort}`,
    ]);
    expect(devServer.command).toEqual(
      expect.arrayContaining([`--port=${defaults.devPort}`, `--ui-port=${defaults.uiPort}`, '--ip=0.0.0.0']),
    );
    const flags = searchAttributeFlags();
    const expected = flags.filter((_, index) => index % 2 === 1).map((value) => `--search-attribute=${value}`);
    expect(devServer.command!.filter((argument) => argument.startsWith('--search-attribute'))).toEqual(expected);
  });

  test('both servers run with the dynamic config of durable-agent dev (eager activities among it)', () => {
    const devFlags = dynamicConfigFlags().filter((_, index) => index % 2 === 1);
    const devServer = compose.services['temporal-dev']!;
    const given = devServer.command!.filter((argument) => argument.startsWith('--dynamic-config-value='));
    expect(given).toEqual(devFlags.map((value) => `--dynamic-config-value=${value}`));
    expect(DURABLE_AGENT_DYNAMIC_CONFIG['system.enableActivityEagerExecution']).toBe(true);

    const file = parseYaml(compose.configs['temporal-dynamic-config']!.content!) as Record<
      string,
      [{ value: unknown }]
    >;
    const production = Object.fromEntries(Object.entries(file).map(([key, [setting]]) => [key, setting.value]));
    expect(production).toEqual(DURABLE_AGENT_DYNAMIC_CONFIG);
  });

  test('production registers the same search attributes and serves the Web UI on 8080', () => {
    // The namespace job runs the script scripts/production-stack.mjs runs (test/production-stack checks its list).
    const script = readFileSync(
      new URL(`../${compose.configs['temporal-namespace-script']!.file}`, import.meta.url),
      'utf8',
    );
    for (const key of DURABLE_AGENT_SEARCH_ATTRIBUTE_KEYS) expect(script).toContain(key.name);
    expect(compose.services['temporal-ui']!.ports).toEqual(['8080:8080']);
    expect(compose.services.temporal!.ports).toEqual([`${defaults.devPort}:${defaults.devPort}`]);
  });
});

test('the Dockerfile runs the CLI that package.json publishes, as `worker` by default', () => {
  const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    bin: Record<string, string>;
  };
  expect(dockerfile).toContain(`ENTRYPOINT ["node", "${manifest.bin['durable-agent']}"]`);
  expect(dockerfile).toContain('CMD ["worker"]');
});

test('the Dockerfile copies what `npm run build` runs before it runs it (the script that copies the chat page)', () => {
  const dockerfile = readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8');
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const scripts = [...manifest.scripts.build!.matchAll(/node (scripts\/\S+)/g)].map((match) => match[1]!);
  expect(scripts).toEqual(['scripts/copy-page.mjs']);
  const build = dockerfile.indexOf('RUN npm run build');
  for (const script of scripts) {
    const copied = dockerfile.indexOf(`COPY ${script} `);
    expect(copied, `${script} is copied`).toBeGreaterThan(-1);
    expect(copied).toBeLessThan(build);
  }
});
