import type { Api } from './api';
import { CliError } from './errors';
import type { Progress } from './progress';
import { type DeploymentView, FINAL, logKey, type LogLine } from './view';

/** Status reads at most this often when the server answers at once (no long-poll): 30 a minute of the 60 allowed. */
const MIN_STATUS_GAP_MS = 2000;
/** Log tails every 3 s: 20 reads a minute, so status and logs together stay under the compat read budget. */
const LOG_GAP_MS = 3000;
/** Long-poll window: short enough that the phases between queued and running still show while they happen. */
const LONG_POLL_S = 5;

export interface FollowOptions {
  progress: Progress;
  timeoutMs: number;
  /** Tail the deployment's logs into the progress (not for --json, which prints only the result). */
  logs: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Follows a deployment until it is running, failed or stopped. The status is long-polled
 * (`?wait=running&timeout=…`, one request per change) where the server supports it; a server that refuses the
 * parameter (400) or ignores it is polled every 2 s instead.
 */
export async function followDeployment(api: Api, id: string, opts: FollowOptions): Promise<DeploymentView> {
  const deadline = Date.now() + opts.timeoutMs;
  let longPoll = true;
  let done = false;
  let last: DeploymentView | undefined;
  let seenLogs = new Set<string>();

  // The first read answers at once, so the display shows where the deployment is before any long-poll holds.
  async function readStatus(first: boolean): Promise<DeploymentView> {
    const wait = Math.min(LONG_POLL_S, Math.max(1, Math.ceil((deadline - Date.now()) / 1000)));
    const base = `/compat/deployments/${id}`;
    const polling = longPoll && !first;
    const r = await api.get<DeploymentView>(polling ? `${base}?wait=running&timeout=${wait}` : base, [400, 404]);
    if (r.status === 400 && polling) {
      longPoll = false;
      return readStatus(false);
    }
    if (r.status === 404)
      throw new CliError(`deployment ${id} no longer exists (destroyed while it was followed)`, undefined, 1, r.body);
    if (r.status === 400) throw new CliError(`the server refused to read deployment ${id}`, undefined, 1, r.body);
    return r.body;
  }

  async function readLogs() {
    const r = await api.get<{ lines?: LogLine[] }>(`/compat/deployments/${id}/logs?limit=50`, [404]);
    const lines = r.body.lines ?? [];
    const fresh = lines.filter((l) => !seenLogs.has(logKey(l)));
    // The window of the last read is enough to tell new lines from old: the server answers the last 50 each time.
    seenLogs = new Set(lines.map(logKey));
    if (fresh.length) opts.progress.logs(fresh);
  }

  const tailing = (async () => {
    while (opts.logs && !done) {
      await readLogs().catch(() => undefined); // a missed tail is shown by the next one
      for (let t = 0; t < LOG_GAP_MS && !done; t += 250) await sleep(250);
    }
  })();

  try {
    for (let first = true; ; first = false) {
      const started = Date.now();
      last = await readStatus(first);
      opts.progress.deployment(last);
      if (FINAL.has(last.status)) break;
      if (Date.now() >= deadline)
        throw new CliError(
          `deployment ${id} is still ${last.status} after ${Math.round(opts.timeoutMs / 1000)} s`,
          `it goes on without you: slipway status ${id}`,
          2,
          last,
        );
      const gap = (first ? 0 : MIN_STATUS_GAP_MS) - (Date.now() - started);
      if (gap > 0) await sleep(gap);
    }
  } finally {
    done = true;
    await tailing;
  }
  // The lines that explain the end (the app's first output, or why it exited).
  if (opts.logs) await readLogs().catch(() => undefined);
  return last;
}
