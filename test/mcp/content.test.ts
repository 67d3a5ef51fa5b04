import { describe, expect, test } from 'vitest';
import { toolResultToText, truncateText } from '../../src/worker/mcp/content.js';

describe('tool result content for the model', () => {
  test('text blocks are joined by newlines', () => {
    const result = toolResultToText({
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    });
    expect(result).toEqual({ text: 'one\ntwo', truncated: false });
  });

  test('images and audio become a placeholder with mime type and size, never base64', () => {
    const data = Buffer.alloc(3000).toString('base64');
    const { text } = toolResultToText({
      content: [
        { type: 'image', data, mimeType: 'image/png' },
        { type: 'audio', data: Buffer.alloc(100).toString('base64'), mimeType: 'audio/wav' },
      ],
    });
    expect(text).toBe('[image: image/png, 2.9 KiB, not shown]\n[audio: audio/wav, 100 bytes, not shown]');
  });

  test('embedded resources: text inline under its URI, blobs summarised', () => {
    const { text } = toolResultToText({
      content: [
        { type: 'resource', resource: { uri: 'file:///notes.md', mimeType: 'text/markdown', text: '# Notes' } },
        { type: 'resource', resource: { uri: 'file:///logo.png', mimeType: 'image/png', blob: 'AAECAw==' } },
      ],
    });
    expect(text).toBe(
      '[resource: file:///notes.md (text/markdown)]\n# Notes\n' +
        '[resource: file:///logo.png (image/png), 4 bytes of binary data, not shown]',
    );
  });

  test('resource links show name, URI, type, size and description', () => {
    const { text } = toolResultToText({
      content: [
        {
          type: 'resource_link',
          uri: 'https://example.com/r.pdf',
          name: 'report',
          mimeType: 'application/pdf',
          size: 2048,
          description: 'Q3 report',
        },
        { type: 'resource_link', uri: 'file:///a', name: 'a' },
      ],
    });
    expect(text).toBe(
      '[resource link: report <https://example.com/r.pdf> (application/pdf, 2.0 KiB): Q3 report]\n' +
        '[resource link: a <file:///a>]',
    );
  });

  test('structuredContent is given as JSON when no text block carries the result, and never twice', () => {
    expect(toolResultToText({ content: [], structuredContent: { total: 3 } }).text).toBe('{\n  "total": 3\n}');
    const withImage = toolResultToText({
      content: [{ type: 'image', data: 'AAAA', mimeType: 'image/gif' }],
      structuredContent: { width: 1 },
    });
    expect(withImage.text).toBe('[image: image/gif, 3 bytes, not shown]\nStructured content:\n{\n  "width": 1\n}');
    const both = toolResultToText({
      content: [{ type: 'text', text: '{"total":3}' }],
      structuredContent: { total: 3 },
    });
    expect(both.text).toBe('{"total":3}');
  });

  test('a content type this code does not know is shown as JSON, not dropped', () => {
    const result = toolResultToText({ content: [{ type: 'video', uri: 'x' } as never] });
    expect(result.text).toBe('[video content]\n{\n  "type": "video",\n  "uri": "x"\n}');
  });

  test('the size cap: text over maxChars is cut, marker included, and says how much was shown', () => {
    const text = 'a'.repeat(56_789);
    const result = truncateText(text, 20_000);
    expect(result.truncated).toBe(true);
    expect(result.text.length).toBeLessThanOrEqual(20_000);
    expect(result.text).toMatch(/^a+\n…\[truncated: (\d+) of 56789 characters shown\]$/);
    const shown = Number(/truncated: (\d+) of/.exec(result.text)![1]);
    expect(result.text.startsWith('a'.repeat(shown) + '\n…')).toBe(true);
    expect(truncateText('short', 20_000)).toEqual({ text: 'short', truncated: false });
    expect(truncateText('x'.repeat(100), 100)).toEqual({ text: 'x'.repeat(100), truncated: false });
  });

  test('the size cap never splits a surrogate pair', () => {
    const text = '😀'.repeat(200);
    const { text: cut } = truncateText(text, 100);
    const body = cut.slice(0, cut.indexOf('\n…'));
    expect(body).toBe('😀'.repeat(body.length / 2));
  });

  test('an empty result is an empty string', () => {
    expect(toolResultToText({ content: [] })).toEqual({ text: '', truncated: false });
  });
});
