import net from 'node:net';

import { heartbeat } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Docker from 'dockerode';

import { type FailureCause, hintFor } from '../../shared/deployments/hints';
import { listeningPorts } from '../../shared/engine/listening';
import { readContainerLogs } from '../../shared/engine/logs';
import { httpProbe } from '../../shared/engine/probe';
import { containerIps } from './engine-instances';
import { type Diagnosis, type FailureDetails, type Instance, type InstanceState, PROVIDER_FAILURES } from './provider';

const LAST_LINES = 20;

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

async function lastLines(docker: Docker, id: string): Promise<string[]> {
  return (await readContainerLogs(docker, id, LAST_LINES).catch(() => [])).map((l) => l.message);
}

/** The cause of a failure, from what the engine saw (shared/deployments/hints.ts words it). */
async function causeOf(
  info: Docker.ContainerInspectInfo,
  d: Pick<Diagnosis, 'oomKilled' | 'exitCode'>,
  crashed: boolean,
  port?: number,
): Promise<FailureCause> {
  const memory = info.HostConfig?.Memory;
  if (d.oomKilled) return { cause: 'out_of_memory', ...(memory ? { memoryMb: Math.round(memory / 1048576) } : {}) };
  if (crashed) return { cause: 'app_exited', ...(d.exitCode !== undefined ? { exitCode: d.exitCode } : {}) };
  if (port === undefined) return { cause: 'unknown' };
  const listeners = await listeningPorts(info.State?.Pid);
  const onPort = listeners.find((l) => l.port === port);
  if (onPort?.loopbackOnly) return { cause: 'loopback_only', port };
  const elsewhere = listeners.filter((l) => !l.loopbackOnly && l.port !== port).map((l) => l.port);
  if (!onPort && elsewhere.length > 0) return { cause: 'wrong_port', port, listening: elsewhere };
  return { cause: 'port_never_opened', port };
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
): Promise<void> {
  const container = docker.getContainer(ref.id);
  const deadline = Date.now() + opts.timeoutS * 1000;
  let opened = false;
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
    await new Promise((r) => setTimeout(r, 250));
  }
}
