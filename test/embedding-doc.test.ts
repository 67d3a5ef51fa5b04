import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');

/** The TypeScript files of the embedded example, relative to it. */
function exampleFiles(): string[] {
  return ['src', 'test'].flatMap((folder) =>
    readdirSync(new URL(`../examples/embedded/${folder}`, import.meta.url))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `${folder}/${file}`),
  );
}

describe('docs/embedding.md', () => {
  it('shows only code that is a whole file of examples/embedded (typechecked, its test run by npm test)', () => {
    const blocks = [...read('docs/embedding.md').matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
    const files = new Map(exampleFiles().map((file) => [read(`examples/embedded/${file}`), file]));
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(files.get(block!), block!.slice(0, 120)).toBeDefined();
  });

  it('shows every file of examples/embedded', () => {
    const doc = read('docs/embedding.md');
    for (const file of exampleFiles()) expect(doc, file).toContain(read(`examples/embedded/${file}`));
  });
});
