import { type Api, paceOf, unwrap } from '../api';
import { logCursor } from '../cursor';
import { CliError } from '../errors';
import { tailEvents } from '../events';
import type { Output } from '../output';
import { onTarget, type Target } from '../target';
import { type LogLine, printable } from '../view';

/** Reads come at most this often; less often when the platform budget would not last (see paceOf). */
const FOLLOW_GAP_MS = 2000;
/** Lines one follow read returns at most (the route's maximum). */
const FOLLOW_PAGE = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LogsOptions {
  follow?: boolean;
  limit: string;
  build?: boolean;
  app?: boolean;
  system?: boolean;
}

type Stream = 'build' | 'app' | 'system';

function limitOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new CliError(`--limit ${value}: give 1 to 1000`);
  return n;
}

function streamOf(o: LogsOptions): Stream | undefined {
  const chosen = (['build', 'app', 'system'] as const).filter((s) => o[s]);
  if (chosen.length > 1) throw new CliError(`give one of --build, --app and --system (got ${chosen.join(', ')})`);
  return chosen[0];
}

const lineText = (l: LogLine) => `${l.timestamp} ${l.stream.padEnd(6)} ${printable(l.message)}`;

interface Logs {
  deploymentId: string;
  lines: LogLine[];
}

/**
 * The last lines (--build, --app or --system: only the build's, the instances' or Slipway's own); with --follow, new
 * lines as they come until the deployment is destroyed or the user stops it, each once and in order. Build and system
 * lines are what the event stream carries: they are followed on it. The app's output is not on the stream, so following
 * it reads on from the last line shown (`since`), paced by the platform budget the server reports. --json prints the
 * body, or one line object per line when following (NDJSON), so a script can read as it goes.
 */
export async function logs(api: Api, out: Output, target: Target, o: LogsOptions) {
  const id = target.id;
  const stream = streamOf(o);
  const path = `/platform/deployments/${id}/logs`;
  const only = stream ? `&stream=${stream}` : '';
  const first = await onTarget(target, () => api.get<unknown>(`${path}?limit=${limitOf(o.limit)}${only}`));
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
  const gone = () => out.info(`deployment ${id} was destroyed; no more lines`);
  if (stream === 'build' || stream === 'system') {
    // From the stream's start: what the first read printed is older than the cursor, and skipped. The first read
    // found the deployment, so a 404 from here on is its destroy.
    const end = await tailEvents(
      api,
      id,
      { status() {}, log: (l) => l.stream === stream && print([l]) },
      new AbortController().signal,
      { done: () => false },
    ).catch((err: unknown) => {
      if (err instanceof CliError && (err.json as { status?: number } | undefined)?.status === 404)
        return { kind: 'destroyed' as const };
      throw err;
    });
    if (end.kind === 'destroyed') gone();
    return;
  }
  let headers = first.headers;
  for (;;) {
    await sleep(paceOf(headers, FOLLOW_GAP_MS));
    const since = cursor.since;
    const r = await api.get<unknown>(`${path}?limit=${FOLLOW_PAGE}${only}${since ? `&since=${since}` : ''}`, [404]);
    if (r.status === 404) {
      gone();
      return;
    }
    headers = r.headers;
    const { lines } = unwrap<Logs>(r.body);
    if (cursor.gapBefore(lines, FOLLOW_PAGE))
      out.info(`more than ${FOLLOW_PAGE} lines came between two reads: the older of them are not shown`);
    print(lines);
  }
}
