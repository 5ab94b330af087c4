import net from 'node:net';

import { heartbeat, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Docker from 'dockerode';

import { causeInLines, collapseRepeats } from '@shared/deployments/evidence';
import { type FailureCause, hintFor } from '@shared/deployments/hints';
import { type Listener, listeningPorts } from '@shared/engine/listening';
import { readContainerLogs } from '@shared/engine/logs';
import { httpProbe } from '@shared/engine/probe';

import { containerIps } from './engine-instances';
import { type Diagnosis, type FailureDetails, type Instance, type InstanceState, PROVIDER_FAILURES } from './provider';

const LAST_LINES = 20;
/** Lines read to find LAST_LINES once repeats are collapsed: a crash-looping app repeats its run's output. */
const LINES_READ = 400;
/**
 * How long the app must listen elsewhere (or on loopback only), unchanged, before the wait gives up on the port:
 * long enough for an app that opens a second port a moment after the first, short beside any readiness window.
 */
const MISPLACED_SETTLE_MS = 5000;

/**
 * The pause before the next readiness probe, after `probes` probes found the app not ready: short at first, as
 * most apps open their port within a second of starting and each probe's worth of waiting is added to the
 * deploy, then growing to READY_POLL_MAX_MS so a slow app is not probed (and inspected) many times a second.
 */
export const READY_POLL_FIRST_MS = 20;
export const READY_POLL_MAX_MS = 250;
export function readyPollDelay(probes: number): number {
  return Math.min(READY_POLL_MAX_MS, Math.round(READY_POLL_FIRST_MS * 1.5 ** Math.max(0, probes - 1)));
}

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 1000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The log's last lines, each run of repeated lines kept once (a crash-loop prints its run's lines every restart). */
async function lastLines(docker: Docker, id: string): Promise<string[]> {
  const lines = await readContainerLogs(docker, id, LINES_READ).catch((err: unknown) => {
    // Removed since (a destroy raced the diagnosis): it has no lines to show.
    if ((err as { statusCode?: number }).statusCode === 404) return [];
    // The failure is still reported, without the app's last lines; why they are missing is the worker's to say.
    log.warn('the container log could not be read for a failure report', { container: id, error: String(err) });
    return [];
  });
  return collapseRepeats(lines.map((l) => l.message)).slice(-LAST_LINES);
}

/** The cause of a failure, from what the engine saw (shared/deployments/hints.ts words it). */
async function causeOf(
  info: Docker.ContainerInspectInfo,
  d: Pick<Diagnosis, 'oomKilled' | 'exitCode' | 'lastLines'>,
  crashed: boolean,
  port?: number,
): Promise<FailureCause> {
  const memory = info.HostConfig?.Memory;
  if (d.oomKilled) return { cause: 'out_of_memory', ...(memory ? { memoryMb: Math.round(memory / 1048576) } : {}) };
  if (crashed)
    return (
      causeInLines(d.lastLines) ?? {
        cause: 'app_exited',
        ...(d.exitCode !== undefined ? { exitCode: d.exitCode } : {}),
      }
    );
  if (port === undefined) return { cause: 'unknown' };
  return misplaced(await listeningPorts(info.State?.Pid), port) ?? { cause: 'port_never_opened', port };
}

/** The app listens, but where nothing can reach it on `port`: on loopback only, or on other ports. */
function misplaced(listeners: Listener[], port: number): FailureCause | undefined {
  const onPort = listeners.find((l) => l.port === port);
  if (onPort?.loopbackOnly) return { cause: 'loopback_only', port };
  const elsewhere = listeners.filter((l) => !l.loopbackOnly && l.port !== port).map((l) => l.port);
  if (!onPort && elsewhere.length > 0) return { cause: 'wrong_port', port, listening: elsewhere };
  return undefined;
}

/**
 * How the container last ended. A crash-looping container caught between two restarts shows as running with exit
 * code 0 and no OOM flag (the engine resets both when it restarts it): its last `die` and `oom` events tell.
 */
async function lastExit(
  docker: Docker,
  info: Docker.ContainerInspectInfo,
): Promise<{ exitCode?: number; oomKilled: boolean }> {
  const everExited = Boolean(info.State.FinishedAt && !info.State.FinishedAt.startsWith('0001-'));
  if (!info.State.Running)
    return everExited ? { exitCode: info.State.ExitCode, oomKilled: info.State.OOMKilled } : { oomKilled: false };
  if (info.RestartCount === 0) return { oomKilled: false };
  const stream = await docker.getEvents({
    since: Math.floor(Date.parse(info.Created) / 1000),
    until: Math.ceil(Date.now() / 1000),
    filters: { type: ['container'], container: [info.Id], event: ['die', 'oom'] },
  });
  let text = '';
  for await (const chunk of stream as AsyncIterable<Buffer>) text += chunk.toString('utf8');
  let exitCode: number | undefined;
  let oomKilled = false;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line) as { Action?: string; Actor?: { Attributes?: Record<string, string> } };
    if (e.Action === 'oom') oomKilled = true;
    const code = Number(e.Actor?.Attributes?.exitCode);
    if (e.Action === 'die' && Number.isInteger(code)) exitCode = code;
  }
  return { ...(exitCode !== undefined ? { exitCode } : {}), oomKilled };
}

/** Why an instance is not serving, from the engine's own record of it. */
export async function diagnose(docker: Docker, ref: Pick<Instance, 'id' | 'name'>, port?: number): Promise<Diagnosis> {
  const info = await docker.getContainer(ref.id).inspect();
  const crashed = !info.State.Running || info.State.Restarting || info.RestartCount > 0;
  const d = {
    name: ref.name,
    state: info.State.Status as InstanceState,
    ...(await lastExit(docker, info)),
    restarts: info.RestartCount,
    lastLines: await lastLines(docker, info.Id),
  };
  return { ...d, hint: hintFor(await causeOf(info, d, crashed, port)) };
}

/** A non-retryable failure the caller may show, with its Diagnosis as FailureDetails (provider.ts). */
export function failure(type: string, message: string, d: Diagnosis): ApplicationFailure {
  const details: FailureDetails = {
    instance: d.name,
    ...(d.exitCode !== undefined ? { exitCode: d.exitCode } : {}),
    oomKilled: d.oomKilled,
    restarts: d.restarts,
    lastLines: d.lastLines,
    hint: d.hint,
  };
  return ApplicationFailure.create({
    nonRetryable: true,
    type,
    message: `${message}; last log lines:\n${d.lastLines.join('\n')}`,
    details: [details],
  });
}

/**
 * A container that exited before answering, or is crash-looping under its restart policy (between two restarts
 * it may look running, so the restart count is the reliable sign).
 */
export async function crashedBeforeReady(
  docker: Docker,
  info: Docker.ContainerInspectInfo,
  ref: Pick<Instance, 'id' | 'name'>,
  port: number,
): Promise<ApplicationFailure | undefined> {
  const exited = !info.State.Running || info.State.Restarting;
  if (!exited && info.RestartCount === 0) return undefined;
  const d = await diagnose(docker, ref, port);
  const how = exited
    ? `exited with code ${info.State.ExitCode}`
    : `exited and was restarted ${info.RestartCount} times`;
  return failure(PROVIDER_FAILURES.containerExited, `container ${how} before answering on port ${port}`, d);
}

/**
 * Ready when the app accepts TCP on its port inside the org network (the published host port is no signal:
 * docker-proxy accepts connections there even while nothing listens in the container) and, with `http`, answers
 * an HTTP request with any status.
 */
export async function waitInstanceReady(
  docker: Docker,
  ref: Pick<Instance, 'id' | 'name'>,
  opts: { port: number; timeoutS: number; http?: boolean },
  wait: (ms: number) => Promise<void> = pause,
): Promise<void> {
  const container = docker.getContainer(ref.id);
  let probes = 0;
  const deadline = Date.now() + opts.timeoutS * 1000;
  let opened = false;
  // Where the app has listened instead of the port, and since when (the same evidence, unchanged).
  let seen: { key: string; since: number } | undefined;
  for (;;) {
    heartbeat();
    const info = await container.inspect();
    const crashed = await crashedBeforeReady(docker, info, ref, opts.port);
    if (crashed) throw crashed;
    for (const ip of containerIps(info)) {
      if (!(await tcpAnswers(ip, opts.port))) continue;
      opened = true;
      if (opts.http === false || (await httpProbe(ip, opts.port)).status) return;
    }
    // An app settled on another port (or on loopback) will not move by itself: say so now, not at the deadline.
    const elsewhere = opened ? undefined : misplaced(await listeningPorts(info.State?.Pid), opts.port);
    const key = elsewhere && JSON.stringify(elsewhere);
    seen = key ? (seen?.key === key ? seen : { key, since: Date.now() }) : undefined;
    if (elsewhere && seen && Date.now() - seen.since >= MISPLACED_SETTLE_MS) {
      const d = await diagnose(docker, ref, opts.port);
      const where =
        elsewhere.cause === 'wrong_port'
          ? `the app listens on port ${elsewhere.listening.join(', ')} instead`
          : `the app listens on 127.0.0.1:${opts.port} only, unreachable from outside its container`;
      throw failure(
        PROVIDER_FAILURES.portNeverOpened,
        `nothing answered on port ${opts.port}: ${where} (unchanged for ${MISPLACED_SETTLE_MS / 1000} s)`,
        { ...d, hint: hintFor(elsewhere) },
      );
    }
    if (Date.now() > deadline) {
      const d = await diagnose(docker, ref, opts.port);
      if (opened)
        throw failure(
          PROVIDER_FAILURES.appNotAnswering,
          `port ${opts.port} accepted connections but no HTTP answer came within ${opts.timeoutS} s`,
          { ...d, hint: hintFor({ cause: 'not_http', port: opts.port }) },
        );
      throw failure(
        PROVIDER_FAILURES.portNeverOpened,
        `nothing answered on port ${opts.port} within ${opts.timeoutS} s`,
        d,
      );
    }
    await wait(readyPollDelay(++probes));
  }
}
