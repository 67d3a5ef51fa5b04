import { readFile } from 'node:fs/promises';
import { Argument, Option } from '@commander-js/extra-typings';
import { CliError } from './client-command.js';
import { errorMessage } from '../shared/errors.js';
import { ExitCode } from '../shared/exit-codes.js';

/**
 * Where `send` and `ask` take their message from: the argument, stdin, or a file. An argument is bounded by the
 * operating system (one argument of at most 128 KiB on Linux, "Argument list too long" beyond), so long messages come
 * through stdin or `--file`.
 */

export const messageArgument = () =>
  new Argument('[message]', 'the user message; `-` (or leaving it out with piped input) reads it from stdin');

export const messageFileOption = () => new Option('--file <path>', 'read the user message from this file (UTF-8)');

export const messageInputHelp = `
The message comes from the argument, from stdin (when the argument is \`-\`, or is left out and stdin is a pipe or a
file), or from --file <path>. Use stdin or --file for long messages: the operating system limits one argument to about
128 KiB. One trailing newline of stdin or the file is dropped.

  durable-agent ask -c support-42 "Where is my order?"
  git diff | durable-agent ask -c review-7
  durable-agent send -c review-7 --file notes.md`;

/** The message the command line gives: the argument, stdin or `--file` (one of them). Errors are usage errors. */
export async function readMessage(
  argument: string | undefined,
  file: string | undefined,
  stdin: NodeJS.ReadStream = process.stdin,
): Promise<string> {
  if (argument !== undefined && file !== undefined) {
    throw usage('Give the message as an argument or with --file, not both.');
  }
  if (file !== undefined) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw usage(`Cannot read the message file ${file} (--file): ${errorMessage(error)}`, error);
    }
    return nonEmpty(withoutFinalNewline(text), `the file ${file}`);
  }
  if (argument !== undefined && argument !== '-') return argument;
  // A terminal on stdin means nothing was piped: reading it would wait silently for typing, so say what is missing.
  if (argument === undefined && stdin.isTTY === true) {
    throw usage(
      'No message: give it as an argument, pipe it to stdin (or pass `-` to type it, ending with Ctrl-D), or use ' +
        '--file <path>.',
    );
  }
  return nonEmpty(withoutFinalNewline(await readAll(stdin)), 'stdin');
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  // Decoded once at the end, so a multi-byte character split between chunks stays whole.
  return Buffer.concat(chunks).toString('utf8');
}

/** `echo`, heredocs and editors end text with a newline that is not part of the message. */
function withoutFinalNewline(text: string): string {
  return text.replace(/\r?\n$/, '');
}

function nonEmpty(text: string, source: string): string {
  if (text.trim() === '') throw usage(`No message: ${source} is empty.`);
  return text;
}

function usage(message: string, cause?: unknown): CliError {
  return new CliError(message, ExitCode.Usage, cause === undefined ? undefined : { cause });
}
