import type { CommandOutcome, EntityState, RedeployArgs, ReleaseRef } from '@shared/contracts/deployment';

export { ONE_WRITER } from '@shared/contracts/deployment';
import type { DeploymentStatus } from '@shared/deployments/types';

/**
 * The rules a deployment's workflow judges commands by, before it accepts them: pure functions of the command and the
 * entity's state, so the workflow reads as the lifecycle it runs.
 */

export type Pending =
  | { command: 'stop' | 'start' | 'destroy'; args?: undefined }
  | { command: 'redeploy'; args: RedeployArgs }
  | { command: 'scale'; args: { replicas: number; maxReplicas: number } }
  | { command: 'rollback'; args: { revision?: number } };
export type Queued = Pending & { updateId: string; done(o: CommandOutcome): void; fail(err: unknown): void };

/** Why a redeploy's arguments cannot be carried out: it needs a new env (names and their set), new code, or both. */
export function redeployArgsProblem(args: RedeployArgs | undefined): string | undefined {
  if (args?.remount !== undefined) {
    const { volumes } = args.remount ?? {};
    return Number.isSafeInteger(volumes) && volumes! >= 0 && args.envRef === undefined && args.source === undefined
      ? undefined
      : 'A release of changed attachments carries only the number of volumes it mounts.';
  }
  if (!args || (args.envRef === undefined && args.source === undefined))
    return 'A redeploy needs envVars (an object of strings), a new source, or both.';
  if (args.envRef !== undefined && (typeof args.envRef !== 'string' || !Array.isArray(args.envNames)))
    return 'A redeploy needs envVars (an object of strings).';
  if (args.source !== undefined && !['image', 'upload', 'git'].includes(args.source?.type))
    return 'A redeploy source is an image, an upload or a Git repository.';
  return undefined;
}

/** One run executes at most this many commands, then continues as new (the server may suggest it sooner). */
export const COMMANDS_PER_RUN = 100;

/** The status a command leaves when it succeeds: validators judge a command against those queued before it. */
export function statusAfter(p: Pending, s: DeploymentStatus): DeploymentStatus {
  if (p.command === 'stop') return 'stopped';
  if (p.command === 'scale')
    return p.args.replicas === 0 ? (s === 'running' || s === 'stopped' ? 'stopped' : s) : 'running';
  if (p.command === 'start' || p.command === 'redeploy' || p.command === 'rollback') return 'running';
  return s;
}

/** The release a rollback goes to, or why there is none. */
export function rollbackTargetOf(state: EntityState, kept: number, revision?: number): ReleaseRef | string {
  const serving = state.current?.revision;
  if (revision === undefined) {
    const r = state.releases.find((x) => x.healthy && x.revision !== serving);
    return r ?? 'No earlier release of this deployment was healthy, so there is none to roll back to.';
  }
  if (revision === serving && state.current?.healthy)
    return `Release ${revision} is the one serving already; name an earlier revision.`;
  const r = state.releases.find((x) => x.revision === revision);
  if (!r)
    return `Release ${revision} is not among the last ${kept} releases of this deployment (whose images are kept); list them with GET /deployments/{id}/releases.`;
  return r.healthy ? r : `Release ${revision} never became ready; roll back to a release that did.`;
}

/** Why commands that run what was built cannot run: nothing ever was. */
export function nothingToRunIn(state: EntityState): string | undefined {
  return state.current
    ? undefined
    : 'Nothing of this deployment was ever built or pulled; create a new deployment instead.';
}

/** Replicas once the queued commands ran. */
export function replicasAfter(queue: Pending[], replicas: number): number {
  for (const p of queue) if (p.command === 'scale') replicas = p.args.replicas;
  return replicas;
}

/** Volumes the serving release mounts once the queued commands ran: the last attachment change queued says. */
export function volumesAfter(queue: Pending[], current: ReleaseRef | undefined): number {
  let volumes = current?.volumes ?? 0;
  for (const p of queue) if (p.command === 'redeploy' && p.args.remount) volumes = p.args.remount.volumes;
  return volumes;
}
