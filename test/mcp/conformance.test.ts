import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listedScenarios, runScenario, type SuiteVersion } from '../conformance/suite.js';

/**
 * The official MCP conformance suite's client scenarios, run against durable-agent (test/conformance/client.mjs:
 * `McpPool` and `durable-agent mcp login`), for both suite versions and, at 0.2.x, both revisions. Every scenario the
 * suite lists must pass except those named in UNSUPPORTED, which docs/mcp.md's conformance table lists with the reason;
 * a scenario that starts passing, or one the suite adds, fails this test until the table says so.
 */

interface SuiteRun {
  version: SuiteVersion;
  specVersion?: string;
  /** Extensions we claim besides what `list` names for the revision. */
  extensions: string[];
  /** Scenarios the suite lists but does not name in `list` (0.1.16's cross-app access is listed under no version). */
  alsoListed?: string[];
}

const RUNS: SuiteRun[] = [
  {
    version: '016',
    extensions: ['auth/client-credentials-basic', 'auth/client-credentials-jwt'],
    alsoListed: ['auth/cross-app-access-complete-flow'],
  },
  {
    version: '020',
    specVersion: '2025-11-25',
    extensions: [
      'auth/client-credentials-basic',
      'auth/client-credentials-jwt',
      'auth/enterprise-managed-authorization',
    ],
  },
  {
    version: '020',
    specVersion: '2026-07-28',
    extensions: [
      'auth/client-credentials-basic',
      'auth/client-credentials-jwt',
      'auth/enterprise-managed-authorization',
    ],
  },
];

/** Per run (`<version>@<specVersion>`), the scenarios that do not pass; docs/mcp.md gives each one's reason. */
const UNSUPPORTED: Record<string, string[]> = {};

const ADAPTER = new URL('../conformance/client.mjs', import.meta.url);

it('the adapter uses what durable-agent/worker exports, imported from the modules that define it', async () => {
  const worker = (await import('durable-agent/worker')) as Record<string, unknown>;
  const imports = [...readFileSync(ADAPTER, 'utf8').matchAll(/^import \{([^}]+)\} from '(\.[^']+)';$/gm)];
  expect(imports.length).toBeGreaterThan(0);
  for (const [, names, specifier] of imports) {
    const module = (await import(new URL(specifier!, ADAPTER).href)) as Record<string, unknown>;
    for (const name of names!.split(',').map((part) => part.trim())) {
      expect({ name, exported: module[name] === worker[name] }).toEqual({ name, exported: true });
    }
  }
});

for (const run of RUNS) {
  const label = run.specVersion === undefined ? run.version : `${run.version}@${run.specVersion}`;
  const listed = listedScenarios(run.version, run.specVersion);
  const scenarios = [...new Set([...listed, ...(run.alsoListed ?? []), ...run.extensions])];
  const unsupported = UNSUPPORTED[label] ?? [];

  describe.concurrent(`conformance suite ${label}`, () => {
    it('names only scenarios the suite still has', () => {
      expect(unsupported.filter((scenario) => !scenarios.includes(scenario))).toEqual([]);
    });

    for (const scenario of scenarios) {
      const expected = unsupported.includes(scenario) ? 'fails (unsupported, see docs/mcp.md)' : 'passes';
      it(`${scenario} ${expected}`, { timeout: 180_000 }, async () => {
        const outcome = await runScenario(run.version, scenario, run.specVersion, run.extensions.includes(scenario));
        expect({
          scenario,
          passed: outcome.passed,
          report: outcome.passed === (expected === 'passes') ? '' : outcome.report,
        }).toEqual({ scenario, passed: expected === 'passes', report: '' });
      });
    }
  });
}
