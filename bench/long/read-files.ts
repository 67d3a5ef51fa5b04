import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { ScriptFunction } from '../../src/testing/scripted-model/index.js';
import { toolNamesOf } from '../workload.js';
import type { Conversed, LongBench, LongRun } from './run.js';

const TURNS = 50;
const FILES_PER_TURN = 20;
/** 50 KB of text per file. */
const FILE_CHARS = 51_200;
/**
 * A model with a window of 200,000 tokens: the oldest turns are trimmed from its input. A turn's files are about
 * 256,000 estimated tokens (kept whole: the current turn always is), so the turn's token budget is raised to let its
 * two model calls through.
 */
const SETTINGS = { maxInputTokens: 200_000, budget: { maxTokens: 2_000_000 } };

/**
 * The issue's run, as a new user would meet it: a conversation of 50 turns, each reading 20 files of 50 KB with
 * `@modelcontextprotocol/server-filesystem`'s `read_text_file` in one round, then answering (1,000 steps). Tool results
 * are let through whole (`DURABLE_AGENT_TOOL_RESULT_MAX_CHARS=60000`; the default cuts them at 20,000 characters).
 */
export const readFiles: LongRun = {
  name: 'read-files',
  label: `${TURNS} turns of ${FILES_PER_TURN} read_text_file calls on 50 KB files (server-filesystem)`,

  async workerEnvironment(directory) {
    const files = path.join(directory, 'files');
    await mkdir(files, { recursive: true });
    for (let index = 1; index <= FILES_PER_TURN; index++) {
      const line = `File ${index}: the quick brown fox jumps over the lazy dog, line after line. `;
      await writeFile(
        path.join(files, `file-${index}.txt`),
        line.repeat(FILE_CHARS / line.length + 1).slice(0, FILE_CHARS),
      );
    }
    const entry = path.join(
      path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json')),
      'dist',
      'index.js',
    );
    const config = path.join(directory, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({ mcpServers: { files: { command: process.execPath, args: [entry, files] } } }),
    );
    return { DURABLE_AGENT_MCP_CONFIG: config, DURABLE_AGENT_TOOL_RESULT_MAX_CHARS: '60000' };
  },

  script(directory): ScriptFunction {
    const files = path.join(directory, 'files');
    return (request) => {
      if (request.messages.at(-1)?.role === 'tool') return { content: `Read ${FILES_PER_TURN} files.` };
      const read = toolNamesOf(request).find((name) => name.endsWith('read_text_file'));
      if (read === undefined) return { error: { status: 400, body: 'long benchmark: no read_text_file tool offered' } };
      return {
        toolCalls: Array.from({ length: FILES_PER_TURN }, (_, index) => ({
          name: read,
          arguments: { path: path.join(files, `file-${index + 1}.txt`) },
        })),
      };
    };
  },

  async converse(bench: LongBench): Promise<Conversed> {
    const conversationId = `long-read-files-${randomUUID()}`;
    for (let turn = 1; turn <= TURNS; turn++) {
      const result = await bench.turn(() =>
        bench.client.ask(conversationId, `Read the ${FILES_PER_TURN} files (turn ${turn}).`, { settings: SETTINGS }),
      );
      if (result.stopReason !== 'completed' || result.toolCalls !== FILES_PER_TURN) {
        throw new Error(
          `turn ${turn} ended ${result.stopReason} after ${result.toolCalls} tool calls: ${result.answer ?? ''}`,
        );
      }
      if (turn % 10 === 0) bench.log(`${readFiles.name}: ${turn} of ${TURNS} turns`);
    }
    return { conversationId, turns: TURNS, steps: TURNS * FILES_PER_TURN, resultBytes: FILE_CHARS };
  },
};
