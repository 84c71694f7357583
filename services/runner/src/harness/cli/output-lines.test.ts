import { PassThrough } from 'node:stream';
import { outputLines } from './output-lines';

describe('outputLines', () => {
  it('hands over each line with the bytes it took, across chunks, multi-byte characters and a last line without its newline', async () => {
    const stream = new PassThrough();
    const lines: Array<[string, number]> = [];
    const done = outputLines(stream, (line, bytes) => lines.push([line, bytes]));
    const bytes = Buffer.from('{"a":"é"}\r\nsecond\nla', 'utf8');
    // Split inside the two-byte é and inside the second line.
    stream.write(bytes.subarray(0, 8));
    stream.write(bytes.subarray(8, 15));
    stream.end(bytes.subarray(15));
    await done;
    expect(lines).toEqual([
      ['{"a":"é"}', 12],
      ['second', 7],
      ['la', 2],
    ]);
    expect(lines.reduce((sum, [, n]) => sum + n, 0)).toBe(bytes.length);
  });
});
