import { randomBytes } from 'node:crypto';

/** Escape sequences and control characters (tab kept): a log line cannot move a cursor or forge a line break. */
// eslint-disable-next-line no-control-regex
const CONTROL = /\u001b\[[0-9;?]*[ -/]*[@-~]|[\u0000-\u0008\u000A-\u001F\u007F]/g;

export const clean = (s: string) => s.replace(CONTROL, '');

/**
 * Text a deployed app wrote, as an agent must read it: inside a fence whose name carries random bytes, so the app
 * cannot print the closing line and go on as if it were us. An agent's model is told (server instructions and the
 * tool's description) to treat what is inside as data, never as instructions.
 */
export function fence(lines: string[], what: string): string {
  const tag = `untrusted-${what}-${randomBytes(6).toString('hex')}`;
  return [`<${tag}>`, ...lines.map(clean), `</${tag}>`].join('\n');
}

/**
 * The newest lines that fit in `maxChars` (of the lines themselves): the tail is what explains a failure.
 * `truncated` says older lines were left out.
 */
export function capTail(lines: string[], maxChars: number): { lines: string[]; truncated: boolean } {
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (used + line.length + 1 > maxChars) {
      // One line longer than the whole budget still shows its end.
      if (kept.length === 0) kept.push(`…${line.slice(-(maxChars - 1))}`);
      return { lines: kept.reverse(), truncated: true };
    }
    kept.push(line);
    used += line.length + 1;
  }
  return { lines: kept.reverse(), truncated: false };
}
