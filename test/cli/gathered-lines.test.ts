/** gathered-lines.ts: the text of one turn written to stderr as one chunk, in the order it was written. */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { gatherLines } from '../../src/cli/gathered-lines.js';

const target = (): { stream: PassThrough; chunks: string[] } => {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (d: Buffer) => chunks.push(d.toString()));
  return { stream, chunks };
};
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('gatherLines', () => {
  it('writes the lines of one turn as one chunk at the end of the turn, in order, strings and bytes alike', async () => {
    const t = target();
    const g = gatherLines(t.stream);
    for (let i = 0; i < 1000; i++) g.stream.write(`download file-${i}\n`);
    g.stream.write(Buffer.from('a log line: é\n'));
    await Promise.resolve();
    expect(t.chunks).toEqual([]);
    await nextTurn();
    await nextTurn();
    expect(t.chunks).toHaveLength(1);
    expect(t.chunks[0]).toBe(`${Array.from({ length: 1000 }, (_, i) => `download file-${i}\n`).join('')}a log line: é\n`);
    g.stream.write('next turn\n');
    await nextTurn();
    await nextTurn();
    expect(t.chunks).toEqual([t.chunks[0], 'next turn\n']);
    g.close();
  });

  it('writes at once past 64 KiB, on flush(), and on close(); after close() a write goes straight through', async () => {
    const t = target();
    const g = gatherLines(t.stream);
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 64; i++) g.stream.write(line);
    await Promise.resolve();
    expect(t.chunks.join('')).toBe(line.repeat(64));
    g.stream.write('flushed\n');
    g.flush();
    await Promise.resolve();
    expect(t.chunks.join('')).toBe(`${line.repeat(64)}flushed\n`);
    g.stream.write('closed\n');
    g.close();
    g.stream.write('after\n');
    await Promise.resolve();
    expect(t.chunks.join('')).toBe(`${line.repeat(64)}flushed\nclosed\nafter\n`);
  });
});
