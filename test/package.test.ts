import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Vitest's loader forgives what Node's does not (named imports from CommonJS, for one): load the build with Node. */
function exportsUnderNode(specifier: string): string[] {
  const output = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m)));`,
    ],
    { cwd: new URL('..', import.meta.url), encoding: 'utf8' },
  );
  return JSON.parse(output) as string[];
}

describe('the built package', () => {
  it('durable-agent loads under plain Node and exports the client and the workflow types', () => {
    expect(exportsUnderNode('durable-agent')).toEqual(
      expect.arrayContaining(['DurableAgentClient', 'ConversationEndedError', 'FailureType', 'loadConfig']),
    );
  });

  it('durable-agent/testing loads under plain Node and exports the testing kit', () => {
    expect(exportsUnderNode('durable-agent/testing')).toEqual(
      expect.arrayContaining([
        'startScriptedModel',
        'createTimeSkippingEnvironment',
        'startTestAgent',
        'serveMcpOverHttp',
      ]),
    );
  });
});
