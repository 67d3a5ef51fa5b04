import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import { SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { encryptionDataConverter } from '../../src/codec/data-converter.js';
import { WORKFLOW_TRACING_INTERCEPTORS } from '../../src/worker/telemetry/index.js';
import { bundleWorkflows } from '../../src/worker/agent-worker.js';
import { FIXTURE_KEY } from '../codec/fixture-key.js';
import { loadFixtures } from './history-json.js';
import * as releaseCorpus from './release-corpus.js';

/**
 * A worker with tracing on runs the workflow code with Temporal's OpenTelemetry workflow interceptors bundled in and
 * the turn spans of turn-traces.ts live. Both must leave the commands alone (the interceptors only add headers), so
 * every release's corpus, recorded without them, replays with them; and a replay exports no span: the workflow's
 * spans leave through a sink, and sinks are not called while a workflow replays.
 */

/** Every span the sink hands over, as an exporter next to the SDK would receive it. */
class KeptSpans implements SpanExporter {
  readonly spans: ReadableSpan[] = [];
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.spans.push(...spans);
    done({ code: ExportResultCode.SUCCESS });
  }
  async shutdown(): Promise<void> {}
}

describe('replay with tracing on', () => {
  it('replay: Worker.runReplayHistory of a two-tool turn exports no span', async () => {
    const kept = new KeptSpans();
    const fixture = loadFixtures().find((entry) => entry.file === 'parallel-tools.json')!;
    const workflowBundle = await bundleWorkflows({ interceptorModules: [WORKFLOW_TRACING_INTERCEPTORS] });
    await Worker.runReplayHistory(
      { workflowBundle, sinks: { exporter: makeWorkflowExporter(new SimpleSpanProcessor(kept), new Resource({})) } },
      fixture.history,
      fixture.workflowId,
    );
    expect(kept.spans.map((span) => span.name)).toEqual([]);
  });

  it.each(releaseCorpus.corpusVersions())(
    'replay: the %s corpus replays with the tracing interceptors and exports no span',
    async (version) => {
      const kept = new KeptSpans();
      const sinks = { exporter: makeWorkflowExporter(new SimpleSpanProcessor(kept), new Resource({})) };
      const corpus = releaseCorpus.loadCorpus(version);
      const failures: string[] = [];
      for (const encrypted of [false, true]) {
        const histories = corpus.filter((entry) => entry.encrypted === encrypted);
        if (histories.length === 0) continue;
        const workflowBundle = await bundleWorkflows({
          encodeFailures: encrypted,
          interceptorModules: [WORKFLOW_TRACING_INTERCEPTORS],
        });
        // The spans would come from here: the bundle has the tracing interceptors.
        expect(workflowBundle.code).toContain('RunWorkflow:');
        const options = {
          workflowBundle,
          sinks,
          ...(encrypted ? { dataConverter: encryptionDataConverter([FIXTURE_KEY]) } : {}),
        };
        let index = 0;
        for await (const result of Worker.runReplayHistories(options, histories)) {
          const { file } = histories[index++]!;
          if (result.error) failures.push(`${file}: ${result.error.name}: ${result.error.message.split('\n')[0]}`);
        }
        expect(index).toBe(histories.length);
      }
      expect(corpus.length).toBeGreaterThan(0);
      expect(failures).toEqual([]);
      expect(kept.spans.map((span) => span.name)).toEqual([]);
    },
    // The whole corpus, with the workflow cache: half a minute alone, longer on a busy machine.
    240_000,
  );
});
