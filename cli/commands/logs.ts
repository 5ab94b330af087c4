import { type Api, unwrap } from '../api';
import { logCursor } from '../cursor';
import { CliError } from '../errors';
import { followEvents } from '../events';
import type { Output } from '../output';
import { onTarget, type Target } from '../target';
import { type LogLine, printable } from '../view';

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

/** The app's lines come from the engine, the build's and Slipway's from the platform's log: each in its own order. */
const sourceOf = (l: LogLine) => (l.stream === 'stdout' || l.stream === 'stderr' ? 'app' : 'platform');

/** How far before the first read the stream's app lines start: what the server's clock may be behind this one. */
const CLOCK_MARGIN_MS = 5000;

/**
 * An event ID in the stream's format ("events.logAt.logSeq.settled.cmdAt.cmdN.appNs.appN", whose meaning
 * api/features/deployments/event-cursor.ts gives) that
 * starts every source at its beginning but the app's lines, which start at `ms`: a stream opened without one starts
 * them when it opens, and a line the app wrote between the first read and then would be shown by neither.
 */
const appLinesSince = (ms: number) => `0.0.-1.0.0.0.${BigInt(Math.max(0, Math.floor(ms))) * 1_000_000n}.0`;

/**
 * The last lines (--build, --app or --system: only the build's, the instances' or Slipway's own); with --follow, new
 * lines as they come until the deployment is destroyed or the user stops it, each once and in order. Following is one
 * held request: the deployment's event stream carries every kind of line and stays open, and a dropped connection is
 * resumed from the last event's ID. The stream starts before the first read (at the beginning for the platform's lines,
 * a little before the read for the app's), so what the first read printed is skipped by each source's cursor. --json prints the body, or one line object per line when following (NDJSON), so a script can
 * read as it goes.
 */
export async function logs(api: Api, out: Output, target: Target, o: LogsOptions) {
  const id = target.id;
  const stream = streamOf(o);
  const path = `/platform/deployments/${id}/logs`;
  const only = stream ? `&stream=${stream}` : '';
  const askedAt = Date.now();
  const first = await onTarget(target, () => api.get<unknown>(`${path}?limit=${limitOf(o.limit)}${only}`));
  const body = unwrap<Logs>(first.body);
  if (!o.follow) {
    out.result(body, body.lines.map(lineText).join('\n') || '(no log lines yet)');
    return;
  }
  const cursors = { app: logCursor(), platform: logCursor() };
  const print = (lines: LogLine[]) => {
    for (const line of lines)
      for (const l of cursors[sourceOf(line)].fresh([line]))
        process.stdout.write(out.json ? `${JSON.stringify(l)}\n` : `${lineText(l)}\n`);
  };
  print(body.lines);
  const wanted = (l: LogLine) => !stream || (stream === 'app' ? sourceOf(l) === 'app' : l.stream === stream);
  // The first read found the deployment, so a 404 from here on is its destroy.
  const end = await followEvents(
    api,
    id,
    { status() {}, log: (l) => wanted(l) && print([l]) },
    new AbortController().signal,
    appLinesSince(askedAt - CLOCK_MARGIN_MS),
    'destroyed',
  ).catch((err: unknown) => {
    if (err instanceof CliError && (err.json as { status?: number } | undefined)?.status === 404)
      return { kind: 'destroyed' as const };
    throw err;
  });
  if (end.kind === 'destroyed') out.info(`deployment ${id} was destroyed; no more lines`);
}
