import { Console } from 'node:console';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { redactProcessOutput } from '../../src/node/redacted-output.js';
import { Redactor } from '../../src/shared/redaction.js';

/** The output redaction of `worker`, `dev` and `serve` (src/node/redacted-output.ts), on streams of its own. */

const secret = 'client-secret-0123456789abcdef';

function stream(): { stream: NodeJS.WriteStream; written: () => string } {
  const passThrough = new PassThrough();
  const chunks: Buffer[] = [];
  passThrough.on('data', (chunk: Buffer) => chunks.push(chunk));
  return {
    stream: passThrough as unknown as NodeJS.WriteStream,
    written: () => Buffer.concat(chunks).toString('utf8'),
  };
}

describe('redactProcessOutput', () => {
  it('redacts every console method, and a reference to one a library kept before', () => {
    const out = stream();
    const err = stream();
    const console = new Console({ stdout: out.stream, stderr: err.stream });
    const keptWarn = console.warn.bind(console);
    const restore = redactProcessOutput(new Redactor([{ value: secret, label: '[oauth clientSecret]' }]), [
      out.stream,
      err.stream,
    ]);
    console.log('log %s', secret);
    console.info({ cause: `client secret "${secret}" is not valid` });
    console.error(new Error(`refused ${secret}`));
    keptWarn('[mcp-sdk] OAuth "invalid_client". Cause: %j', `client secret "${secret}"`);
    console.table([{ secret }]);
    restore();
    expect(out.written()).not.toContain(secret);
    expect(err.written()).not.toContain(secret);
    expect(out.written()).toContain('log [oauth clientSecret]');
    expect(out.written()).toContain('client secret "[oauth clientSecret]" is not valid');
    expect(err.written()).toContain('Error: refused [oauth clientSecret]');
    expect(err.written()).toContain(String.raw`Cause: "client secret \"[oauth clientSecret]\""`);
  });

  it('redacts raw writes of text and bytes, credentials by their shape too; other bytes pass as they were', () => {
    const out = stream();
    const restore = redactProcessOutput(new Redactor([{ value: secret, label: '[secret]' }]), [out.stream]);
    out.stream.write(Buffer.from(`bytes ${secret}\n`));
    out.stream.write('Authorization: Bearer abcdef0123456789\n');
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
    const written: Buffer[] = [];
    out.stream.on('data', (chunk: Buffer) => written.push(chunk));
    out.stream.write(bytes);
    // A string in another encoding stands for the bytes that are written.
    out.stream.write(Buffer.from(`hex ${secret}`).toString('hex'), 'hex');
    out.stream.write('00ff', 'hex');
    restore();
    expect(out.written()).toContain('bytes [secret]');
    expect(out.written()).toContain('Authorization: [redacted]');
    expect(written[0]).toEqual(bytes);
    expect(written[1]?.toString('utf8')).toBe('hex [secret]');
    expect(written[2]).toEqual(Buffer.from([0x00, 0xff]));
  });

  it('puts the original write back, and knows a secret registered after it was installed', () => {
    const out = stream();
    const secrets = new Redactor();
    const restore = redactProcessOutput(secrets, [out.stream]);
    secrets.add(secret, '[oauth access token]');
    out.stream.write(`now ${secret}\n`);
    restore();
    expect(Object.prototype.hasOwnProperty.call(out.stream, 'write')).toBe(false);
    out.stream.write(`after ${secret}\n`);
    expect(out.written()).toBe(`now [oauth access token]\nafter ${secret}\n`);
  });
});
