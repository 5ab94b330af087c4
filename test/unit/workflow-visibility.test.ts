import { literal } from '@workflows/deployment/visibility';

/** The Markdown a code block's content would need to escape it, as CommonMark reads a fence. */
function contentOf(block: string): string | undefined {
  const [open, ...rest] = block.split('\n');
  const close = rest.findIndex((line) => /^`{3,}\s*$/.test(line) && line.trim().length >= open!.length);
  return close === rest.length - 1 ? rest.slice(0, close).join('\n') : undefined;
}

describe("the Temporal UI's current details: a tenant's text as a literal block", () => {
  it('keeps the text inside one code block, however many backticks it holds', () => {
    const app = 'boom\n```\n![x](http://attacker.example/pixel.png) <img src=x>\n````\nmore';
    const block = literal(app);
    expect(block.startsWith('`````\n')).toBe(true);
    expect(contentOf(block)).toBe(app);
  });

  it('uses a plain fence for plain text, and cuts very long text', () => {
    expect(literal('exited with code 3')).toBe('```\nexited with code 3\n```');
    const long = literal('x'.repeat(5000));
    expect(long.length).toBeLessThan(2100);
    expect(long).toContain('x…\n```');
  });
});
