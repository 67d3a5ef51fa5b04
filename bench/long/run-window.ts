import { runWindowConversation } from './window-run.js';

/**
 * Runs the conversation past a small window on its own and prints its figures as JSON (the `--long` mode of
 * `npm run bench` runs it with the rest):
 *
 *   tsc -p tsconfig.bench.json && node bench/dist/bench/long/run-window.js [turns] [contextWindow]
 */
async function run(): Promise<void> {
  const [turns, contextWindow] = process.argv.slice(2).map(Number);
  const figures = await runWindowConversation({
    turns: turns || undefined,
    contextWindow: contextWindow || undefined,
    onTurn: (turn, result, ms) => {
      if (turn % 25 === 0 || result.compaction) {
        const compaction = result.compaction ? ` compaction ${JSON.stringify(result.compaction)}` : '';
        process.stderr.write(`turn ${turn}: ${result.stopReason} in ${Math.round(ms)} ms${compaction}\n`);
      }
    },
  });
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
}

run().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
