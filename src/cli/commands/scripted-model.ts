import { Command, Option } from '@commander-js/extra-typings';
import { parsePort, parseWholeNumber } from '../arguments.js';
import { waitForSignal } from '../signals.js';
import { loadScriptFile, startScriptedModel, type RecordedRequest } from '../../testing/scripted-model/index.js';

function describeRequest(request: RecordedRequest): string {
  const step = request.stepIndex === null ? 'no step' : `step ${request.stepIndex}`;
  return `${request.options.stream ? 'stream' : 'request'} ${request.sequence}: conversation "${request.conversation}", ${step}, status ${request.status}`;
}

/** `durable-agent scripted-model`: serve a script file as an OpenAI-compatible model until interrupted. */
export function scriptedModelCommand() {
  return new Command('scripted-model')
    .description('Serve a script of model answers as an OpenAI-compatible chat completions API, for tests.')
    .requiredOption('--script <file>', 'JSON array of steps (see docs/scripted-model.md)')
    .addOption(new Option('--port <port>', 'port to listen on; 0 picks a free one').default(0).argParser(parsePort))
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--verbose', 'log every request on stderr', false)
    .addOption(
      new Option(
        '--context-window <tokens>',
        "refuse requests over this many tokens with each API's own error",
      ).argParser(parseWholeNumber),
    )
    .addOption(
      new Option('--summaries <kind>', "answer compaction's summary requests without the script").choices([
        'user-lines',
      ] as const),
    )
    .action(async (options) => {
      const script = await loadScriptFile(options.script);
      const model = await startScriptedModel({
        script,
        port: options.port,
        host: options.host,
        name: options.script,
        ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
        ...(options.summaries !== undefined ? { summaries: options.summaries } : {}),
        onRequest: (request) => {
          // Failures are always logged: a test whose client swallows the 500 should still show why.
          if (request.failure !== null) process.stderr.write(`scripted-model: ${request.failure}\n`);
          else if (options.verbose) process.stderr.write(`scripted-model: ${describeRequest(request)}\n`);
        },
      });
      // The first line of stdout is the base URL, for scripts that start the server and read where it listens.
      process.stdout.write(`${model.baseUrl}\n`);
      await waitForSignal();
      await model.close();
    });
}
