import { lineAssembler } from '@shared/build/lines';

const collect = (pieces: string[], maxLine?: number) => {
  const out: string[] = [];
  const lines = lineAssembler((l) => out.push(l), maxLine);
  for (const p of pieces) lines.push(p);
  lines.end();
  return out;
};

describe('build output reassembled into lines', () => {
  it('joins the pieces npm writes separately into the line it meant', () => {
    expect(collect(['npm', ' ERR!', ' 404', ' Not Found\n', 'npm ERR! 404 done\n'])).toEqual([
      'npm ERR! 404 Not Found',
      'npm ERR! 404 done',
    ]);
  });

  it('splits a piece holding several lines, and drops blank ones and trailing spaces', () => {
    expect(collect(['a\n\nb  \r\nc'])).toEqual(['a', 'b', 'c']);
  });

  it('keeps what a progress bar ended showing after carriage returns', () => {
    expect(collect(['10%\r50%\r100%\n'])).toEqual(['100%']);
  });

  it('emits a line that never ends in bounded pieces', () => {
    expect(collect(['x'.repeat(25)], 10)).toEqual(['x'.repeat(10), 'x'.repeat(10), 'x'.repeat(5)]);
  });

  it('emits the unterminated last line at the end, once', () => {
    const out: string[] = [];
    const lines = lineAssembler((l) => out.push(l));
    lines.push('last');
    lines.end();
    lines.end();
    expect(out).toEqual(['last']);
  });
});
