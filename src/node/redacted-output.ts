import type { Redactor } from '../shared/redaction.js';

/**
 * The process's own output, redacted (docs/security.md, "What leaves the worker"): every write to `process.stdout` and
 * `process.stderr` goes through the {@link Redactor} before it reaches the terminal or the log collector.
 *
 * This is the one place that covers what the dependencies print by themselves, which no logger of ours sees: the MCP
 * SDK's `console.warn` quoting an authorization server's refusal (which may quote the client secret it was sent), a
 * library's `console.error` of an HTTP body, a `debug`-style logger, the stdout of a worker thread. Every `console`
 * method writes through these two streams, whichever reference to it a library kept, so patching the streams is one
 * mechanism instead of one wrapper per library or per console method. What is already redacted (the Runtime's
 * logger, the CLI's errors) passes unchanged: redacting twice changes nothing.
 *
 * A write is redacted as a whole. `console` writes each call in one piece; a secret split across two raw writes of a
 * library (a worker thread's stdout in 64 KiB chunks) is not recognised, and neither is what a native library or a
 * child process writes to the file descriptors directly (the Temporal dev server's output is forwarded through
 * `process.stderr`, so it is covered).
 *
 * Returns a function that puts the original writes back.
 */
export function redactProcessOutput(
  secrets: Redactor,
  streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr],
): () => void {
  const restores = streams.map((stream) => {
    const own = Object.getOwnPropertyDescriptor(stream, 'write');
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    stream.write = (chunk: unknown, ...rest: unknown[]) => write(redactChunk(secrets, chunk, rest[0]), ...rest);
    return () => {
      if (own === undefined) delete (stream as Partial<NodeJS.WriteStream>).write;
      else Object.defineProperty(stream, 'write', own);
    };
  });
  return () => {
    for (const restore of restores) restore();
  };
}

/** `chunk` redacted as text; bytes stay bytes, and what holds no secret goes out as it was. */
function redactChunk(secrets: Redactor, chunk: unknown, encoding: unknown): unknown {
  if (typeof chunk === 'string') {
    if (typeof encoding !== 'string' || /^utf-?8$/i.test(encoding) || !Buffer.isEncoding(encoding)) {
      return secrets.text(chunk);
    }
    // `write(hex, 'hex')` writes the bytes the string stands for: those are what reach the output.
    const bytes = Buffer.from(chunk, encoding);
    const redacted = redactBytes(secrets, bytes);
    return redacted === bytes ? chunk : redacted;
  }
  return chunk instanceof Uint8Array ? redactBytes(secrets, chunk) : chunk;
}

function redactBytes(secrets: Redactor, bytes: Uint8Array): Uint8Array {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const redacted = secrets.text(text);
  return redacted === text ? bytes : Buffer.from(redacted, 'utf8');
}
