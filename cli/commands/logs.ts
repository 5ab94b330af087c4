import type { Api } from '../api';
import { CliError } from '../errors';
import { deploymentId, type Output } from '../output';
import { logKey, type LogLine, printable } from '../view';

const FOLLOW_GAP_MS = 2000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function limitOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new CliError(`--limit ${value}: give 1 to 1000`);
  return n;
}

const lineText = (l: LogLine) => `${l.timestamp} ${l.stream.padEnd(6)} ${printable(l.message)}`;

/**
 * The last lines; with --follow, new lines as they come (read every 2 s, a third of the compat read budget) until
 * the deployment is destroyed or the user stops it. --json prints the body, or one line object per line when
 * following (NDJSON), so a script can read as it goes.
 */
export async function logs(api: Api, out: Output, rawId: string, o: { follow?: boolean; limit: string }) {
  const id = deploymentId(rawId);
  const path = `/compat/deployments/${id}/logs?limit=${limitOf(o.limit)}`;
  const first = (await api.get<{ deploymentId: string; lines: LogLine[] }>(path)).body;
  if (!o.follow) {
    out.result(first, first.lines.map(lineText).join('\n') || '(no log lines yet)');
    return;
  }
  // Each read is the last `limit` lines: a line is new when the previous read did not hold it. Only that window is
  // remembered, so a follow of days holds no more than one read's lines (more than `limit` lines within 2 s are
  // not all shown: raise --limit for a chatty app).
  let previous = new Set<string>();
  const emit = (lines: LogLine[]) => {
    for (const l of lines)
      if (!previous.has(logKey(l))) process.stdout.write(out.json ? `${JSON.stringify(l)}\n` : `${lineText(l)}\n`);
    previous = new Set(lines.map(logKey));
  };
  emit(first.lines);
  for (;;) {
    await sleep(FOLLOW_GAP_MS);
    const r = await api.get<{ lines: LogLine[] }>(path, [404]);
    if (r.status === 404) {
      out.info(`deployment ${id} was destroyed; no more lines`);
      return;
    }
    emit(r.body.lines);
  }
}
