import { describe, expect, it } from 'vitest';
import { readOptions } from '../../bench/options.js';

const EAGER = 'system.enableActivityEagerExecution=true';

describe("the benchmark's dev server", () => {
  it('runs with eager activities, as `durable-agent dev` does, and the raised dispatch limit', () => {
    const { serverArgs, outDir } = readOptions([]);
    expect(serverArgs).toEqual([
      '--dynamic-config-value',
      'history.transferProcessorMaxPollRPS=1000',
      '--dynamic-config-value',
      EAGER,
    ]);
    expect(outDir).toMatch(/docs$/);
  });

  it('--no-eager leaves eager activities off and writes its run apart; --stock-server keeps every default', () => {
    const withoutEager = readOptions(['--no-eager']);
    expect(withoutEager.serverArgs).toEqual(['--dynamic-config-value', 'history.transferProcessorMaxPollRPS=1000']);
    expect(withoutEager.outDir).toMatch(/bench\/dist\/runs\/no-eager$/);
    expect(readOptions(['--stock-server']).serverArgs).toEqual([]);
  });
});
