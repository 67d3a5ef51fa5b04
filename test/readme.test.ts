import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadMcpConfig } from '../src/mcp/config.js';
import { loadScriptFile } from '../src/testing/scripted-model/index.js';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

describe('the README', () => {
  it('shows the example test from examples/agent.test.ts word for word (that file runs in npm test)', () => {
    expect(read('README.md')).toContain(read('examples/agent.test.ts'));
  });

  it('shows the backend example from examples/backend.ts word for word (typechecked with the project)', () => {
    expect(read('README.md')).toContain(read('examples/backend.ts'));
  });

  it('gives the two commands, run and test, before anything else', () => {
    const readme = read('README.md');
    const firstSection = readme.slice(0, readme.indexOf('\n## ', readme.indexOf('## The two commands') + 1));
    expect(firstSection).toContain('npm install && npm start');
    expect(firstSection).toContain('npm install && npm test');
  });
});

describe('the examples the README runs', () => {
  it('examples/two-tools.json is a valid script that calls two tools, then answers', async () => {
    const script = await loadScriptFile(fileURLToPath(new URL('../examples/two-tools.json', import.meta.url)));
    expect(script.slice(0, 2).map((step) => ('toolCalls' in step ? step.toolCalls?.[0]?.name : undefined))).toEqual([
      'everything__echo',
      'everything__get-sum',
    ]);
  });

  it('examples/mcp.json configures the everything server over stdio', () => {
    const config = loadMcpConfig(fileURLToPath(new URL('../examples/mcp.json', import.meta.url)));
    expect(config.servers.map((server) => [server.name, server.transport])).toEqual([['everything', 'stdio']]);
  });
});
