import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

describe('the README', () => {
  it('shows the example test from examples/agent.test.ts word for word (that file runs in npm test)', () => {
    expect(read('README.md')).toContain(read('examples/agent.test.ts'));
  });

  it('gives the two commands, run and test, before anything else', () => {
    const readme = read('README.md');
    const firstSection = readme.slice(0, readme.indexOf('\n## ', readme.indexOf('## The two commands') + 1));
    expect(firstSection).toContain('npm install && npm start');
    expect(firstSection).toContain('npm install && npm test');
  });
});
