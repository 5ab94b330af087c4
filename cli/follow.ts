import { type Api, unwrap } from './api';
import { CliError } from './errors';
import { followEvents } from './events';
import type { Progress } from './progress';
import type { DeploymentView, LogLine } from './view';

/** The app's first lines shown once it has settled: what it printed on start, or why it exited. */
const APP_LINES = 50;

export interface FollowOptions {
  progress: Progress;
  timeoutMs: number;
  /** Show the build's and the platform's lines, then the app's first (not for --json, which prints only the result). */
  logs: boolean;
}

const destroyed = (id: string, json?: unknown) =>
  new CliError(`deployment ${id} no longer exists (destroyed while it was followed)`, undefined, 1, json);

const isNotFound = (err: unknown) =>
  err instanceof CliError && (err.json as { status?: unknown } | undefined)?.status === 404;

async function read(api: Api, id: string): Promise<DeploymentView> {
  const r = await api.get<unknown>(`/platform/deployments/${id}`, [404]);
  if (r.status === 404) throw destroyed(id, { ...(r.body as object), status: 404 });
  return unwrap<DeploymentView>(r.body);
}

/**
 * Follows a deployment until it is running, failed or stopped, on the platform's event stream: one request for the
 * whole wait (plus one per dropped connection), every status change and build or system line once and in order.
 * The app's own output is not on the stream: its first lines are read once the deployment has settled.
 */
export async function followDeployment(api: Api, id: string, opts: FollowOptions): Promise<DeploymentView> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), opts.timeoutMs);
  try {
    const end = await followEvents(
      api,
      id,
      {
        status: (e) => opts.progress.event(e),
        log: (line) => {
          if (opts.logs) opts.progress.logs([line]);
        },
      },
      timeout.signal,
    );
    if (end.kind === 'destroyed') throw destroyed(id);
  } catch (err) {
    if (isNotFound(err)) throw destroyed(id, (err as CliError).json);
    if (!timeout.signal.aborted) throw err;
    const now = await read(api, id);
    throw new CliError(
      `deployment ${id} is still ${now.status} after ${Math.round(opts.timeoutMs / 1000)} s`,
      `it goes on without you: slipway status ${id}`,
      2,
      now,
    );
  } finally {
    clearTimeout(timer);
  }
  const final = await read(api, id);
  if (opts.logs) {
    const r = await api.get<unknown>(`/platform/deployments/${id}/logs?stream=app&limit=${APP_LINES}`, [404]);
    if (r.status === 200) opts.progress.logs(unwrap<{ lines: LogLine[] }>(r.body).lines);
  }
  opts.progress.deployment(final);
  return final;
}
