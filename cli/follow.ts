import { type Api, unwrap } from './api';
import { CliError } from './errors';
import { type EventHandlers, followEvents, tailEvents } from './events';
import type { Progress } from './progress';
import { type DeploymentView, FINAL, type LogLine } from './view';

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

/** The stream carries the app's own lines too; a follow shows the build's and the platform's, as it always did. */
const platformLine = (line: LogLine) => line.stream === 'build' || line.stream === 'system';

/** What a follow shows as it goes: each status change, and the build's and the platform's lines unless --json. */
const progressHandlers = (opts: FollowOptions): EventHandlers => ({
  status: (e) => opts.progress.event(e),
  log: (line) => {
    if (opts.logs && platformLine(line)) opts.progress.logs([line]);
  },
});

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
 * The app's first lines are read once the deployment has settled.
 */
export async function followDeployment(api: Api, id: string, opts: FollowOptions): Promise<DeploymentView> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), opts.timeoutMs);
  try {
    const end = await followEvents(api, id, progressHandlers(opts), timeout.signal);
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

/** What a command's 202 carries: the deployment as it was, and the command to follow. */
export interface CommandAccepted {
  deployment: DeploymentView;
  statusUrl: string;
  command: { id: string; name: string; url: string };
}

export interface CommandProgress {
  id: string;
  state: 'running' | 'succeeded' | 'failed';
  outcome?: { status: string; revision: number; replicas: number };
  message?: string;
}

/** Reading to the end of a settled deployment's stream takes one request; this long means something is wrong. */
const CURSOR_WAIT_MS = 30_000;

/**
 * Where the deployment's event stream ends now, read before a command is sent, so that following the command shows
 * what the command does and nothing older. Only a settled deployment's stream ends (and commands are refused in the
 * other statuses anyway): for one that is not, there is no cursor, and a follower starts from the beginning.
 */
export async function eventCursor(api: Api, d: Pick<DeploymentView, 'id' | 'status'>): Promise<string | undefined> {
  if (!FINAL.has(d.status)) return undefined;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), CURSOR_WAIT_MS);
  try {
    return (await followEvents(api, d.id, { status() {}, log() {} }, ctl.signal)).cursor;
  } catch (err) {
    if (ctl.signal.aborted) return undefined;
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Follows an accepted command (a redeploy, rollback, stop, start or scale) until it has succeeded or failed: its
 * status changes and build or system lines from the event stream as they come (from `from`, see eventCursor), and its
 * state from GET …/commands/{id} each time the stream has been read to its end. Then reads the deployment once, for
 * the release that serves and, when the command failed, lastFailure's why and hint.
 */
export async function followCommand(
  api: Api,
  id: string,
  command: { id: string; name: string },
  opts: FollowOptions & { from?: string },
): Promise<{ progress: CommandProgress; deployment: DeploymentView }> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), opts.timeoutMs);
  const path = `/platform/deployments/${id}/commands/${encodeURIComponent(command.id)}`;
  let last: CommandProgress | undefined;
  try {
    const end = await tailEvents(api, id, progressHandlers(opts), timeout.signal, {
      ...(opts.from ? { from: opts.from } : {}),
      done: async () => {
        const r = await api.get<unknown>(path, [404]);
        if (r.status === 404) {
          // The deployment gone (read says so), or the command no longer among those its workflow remembers.
          const now = await read(api, id);
          throw new CliError(
            `the server no longer knows how the ${command.name} ended`,
            `read the outcome from the deployment: slipway status ${id}`,
            1,
            now,
          );
        }
        last = unwrap<CommandProgress>(r.body);
        return last.state !== 'running';
      },
    });
    if (end.kind === 'destroyed') throw destroyed(id);
  } catch (err) {
    if (isNotFound(err)) throw destroyed(id, (err as CliError).json);
    if (!timeout.signal.aborted) throw err;
    throw new CliError(
      `the ${command.name} of ${id} is still running after ${Math.round(opts.timeoutMs / 1000)} s`,
      `it goes on without you: slipway status ${id}`,
      2,
      last,
    );
  } finally {
    clearTimeout(timer);
  }
  return { progress: last!, deployment: await read(api, id) };
}
