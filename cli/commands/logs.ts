import { type Api, paceOf, unwrap } from '../api';
import { logCursor } from '../cursor';
import { CliError } from '../errors';
import { deploymentId, type Output } from '../output';
import { type LogLine, printable } from '../view';

/** Reads come at most this often; less often when the platform budget would not last (see paceOf). */
const FOLLOW_GAP_MS = 2000;
/** Lines one follow read returns at most (the route's maximum). */
const FOLLOW_PAGE = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function limitOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new CliError(`--limit ${value}: give 1 to 1000`);
  return n;
}

const lineText = (l: LogLine) => `${l.timestamp} ${l.stream.padEnd(6)} ${printable(l.message)}`;

interface Logs {
  deploymentId: string;
  lines: LogLine[];
}

/**
 * The last lines; with --follow, new lines as they come until the deployment is destroyed or the user stops it.
 * Following reads on from the last line shown (`since`), so every line is printed once and in order, and paces its
 * reads by the platform budget the server reports. --json prints the body, or one line object per line when
 * following (NDJSON), so a script can read as it goes.
 */
export async function logs(api: Api, out: Output, rawId: string, o: { follow?: boolean; limit: string }) {
  const id = deploymentId(rawId);
  const path = `/platform/deployments/${id}/logs`;
  const first = await api.get<unknown>(`${path}?limit=${limitOf(o.limit)}`);
  const body = unwrap<Logs>(first.body);
  if (!o.follow) {
    out.result(body, body.lines.map(lineText).join('\n') || '(no log lines yet)');
    return;
  }
  const cursor = logCursor();
  const print = (lines: LogLine[]) => {
    for (const l of cursor.fresh(lines)) process.stdout.write(out.json ? `${JSON.stringify(l)}\n` : `${lineText(l)}\n`);
  };
  print(body.lines);
  let headers = first.headers;
  for (;;) {
    await sleep(paceOf(headers, FOLLOW_GAP_MS));
    const since = cursor.since;
    const r = await api.get<unknown>(`${path}?limit=${FOLLOW_PAGE}${since ? `&since=${since}` : ''}`, [404]);
    if (r.status === 404) {
      out.info(`deployment ${id} was destroyed; no more lines`);
      return;
    }
    headers = r.headers;
    const { lines } = unwrap<Logs>(r.body);
    if (cursor.gapBefore(lines, FOLLOW_PAGE))
      out.info(`more than ${FOLLOW_PAGE} lines came between two reads: the older of them are not shown`);
    print(lines);
  }
}
