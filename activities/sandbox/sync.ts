import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import type Docker from 'dockerode';
import { request } from 'undici';

import type { BlobStore } from '@shared/builder/files';
import { toManifest } from '@shared/builder/files';
import {
  previewHost,
  previewRouteKey,
  SANDBOX_CONFIG_LABEL,
  type SandboxRecord,
  type SandboxStore,
  type SyncAction,
} from '@shared/builder/sandbox-store';
import type { BuilderStore } from '@shared/builder/store';
import type { Manifest } from '@shared/builder/types';
import type { Config } from '@shared/config';
import type { SyncOutcome } from '@shared/contracts/sandbox';
import type { EdgeRouter } from '@shared/edge';
import { httpProbe } from '@shared/engine/probe';

import { createEngineImages } from '../providers/engine-images';
import { publishedPort, upstreamOf } from '../providers/engine-instances';
import { createOrgNetworks } from '../providers/engine-network';
import { containerName, createSandboxEngine, RUNTIMES } from './engine';

export interface SyncActivityDeps {
  docker: Docker;
  instance: string;
  sandboxes: SandboxStore;
  builder: Pick<BuilderStore, 'getCheckpoint'>;
  blobs: Pick<BlobStore, 'get'>;
  edge: Pick<EdgeRouter, 'publish' | 'showStopped'>;
  /** Where container ports are published and how the edge router reaches them (the engine's settings). */
  engine: { publicHost: string; bindIp: string; upstreamHost?: string };
  config: Pick<
    Config,
    | 'BUILD_BASE_IMAGE_NODE'
    | 'BUILD_BASE_IMAGE_STATIC'
    | 'BUILD_BASE_IMAGE_PYTHON'
    | 'EDGE_BIND_IP'
    | 'EDGE_PORT'
    | 'EDGE_DOMAIN'
    | 'SANDBOX_READY_TIMEOUT_S'
    | 'SANDBOX_INSTALL_TIMEOUT_S'
  >;
}

export interface ApplyInput {
  sessionId: string;
  orgId: string;
  /** null: the session has no checkpoint yet (an empty app). */
  checkpointId: string | null;
}

/** A sync that cannot succeed by trying again: said in words for the session's response. */
class SyncRefused extends Error {}

/** Files read from S3 at most this many at once. */
const READ_CONCURRENCY = 16;

/**
 * The sandbox workflow's activities (workflows/sandbox): apply a checkpoint to the session's container — only the
 * changed files when the container is the one that holds the last applied files, a new container and every file
 * otherwise — then probe the preview, and stop an idle one.
 */
export function createSyncActivities(deps: SyncActivityDeps) {
  const { docker, config } = deps;
  const engine = createSandboxEngine({ docker, instance: deps.instance, bindIp: deps.engine.bindIp });
  const images = createEngineImages({ docker, allowPrivateRegistries: false });
  const networks = createOrgNetworks({ docker, instance: deps.instance });
  const baseImage = {
    node: config.BUILD_BASE_IMAGE_NODE,
    static: config.BUILD_BASE_IMAGE_STATIC,
    python: config.BUILD_BASE_IMAGE_PYTHON,
  };
  const at = deps.engine;
  const probeHost = ['0.0.0.0', '::'].includes(at.bindIp) ? '127.0.0.1' : at.bindIp;

  async function read(orgId: string, m: Manifest, paths: string[]) {
    const out: { path: string; bytes: Buffer }[] = [];
    for (let i = 0; i < paths.length; i += READ_CONCURRENCY) {
      const batch = paths.slice(i, i + READ_CONCURRENCY);
      out.push(
        ...(await Promise.all(
          batch.map(async (path) => ({ path, bytes: await deps.blobs.get(orgId, m[path]!.sha256) })),
        )),
      );
      heartbeat();
    }
    return out;
  }

  async function install(id: string, r: SandboxRecord, target: Manifest): Promise<void> {
    const spec = RUNTIMES[r.config.runtime];
    if (!spec.install || !spec.manifest || !target[spec.manifest]) return;
    const res = await engine.run(id, spec.install, {
      workdir: spec.appDir,
      timeoutMs: config.SANDBOX_INSTALL_TIMEOUT_S * 1000,
    });
    if (res.exitCode === 0) return;
    const tail = res.output.trim().split('\n').slice(-3).join(' | ');
    throw new SyncRefused(
      res.exitCode === null
        ? `${spec.install.join(' ')} took longer than ${config.SANDBOX_INSTALL_TIMEOUT_S} s; check ${spec.manifest}`
        : `${spec.install.join(' ')} failed (exit ${res.exitCode}); check ${spec.manifest}: ${tail}`,
    );
  }

  /** Until the app answers HTTP on its published port (any status below 500), or the configured time is up. */
  async function waitAnswering(id: string, r: SandboxRecord): Promise<number> {
    const deadline = Date.now() + config.SANDBOX_READY_TIMEOUT_S * 1000;
    for (;;) {
      heartbeat();
      const info = await engine.inspect(id);
      if (!info?.State.Running)
        throw new SyncRefused('the sandbox container stopped while starting; check startCommand');
      const port = publishedPort(info);
      if (port) {
        const probe = await httpProbe(probeHost, port);
        if (probe.ok) return port;
      }
      if (Date.now() > deadline)
        throw new SyncRefused(
          `the app did not answer HTTP on port ${r.config.port} within ${config.SANDBOX_READY_TIMEOUT_S} s; check that startCommand listens on $PORT (${r.config.port})`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The preview answers through the edge router (its route points at this container). */
  async function probeEdge(sessionId: string): Promise<void> {
    const host = previewHost(sessionId, config.EDGE_DOMAIN);
    const edgeHost = ['0.0.0.0', '::'].includes(config.EDGE_BIND_IP) ? '127.0.0.1' : config.EDGE_BIND_IP;
    let last = '';
    for (let attempt = 0; ; attempt++) {
      try {
        const res = await request(`http://${edgeHost}:${config.EDGE_PORT}/`, { headers: { host }, reset: true });
        await res.body.dump();
        if (res.statusCode < 500) return;
        last = `HTTP ${res.statusCode}`;
      } catch (err) {
        // Caddy closes connections at a config change: asked again below, and the last failure is kept for the error.
        last = String(err);
      }
      if (attempt >= 20) throw new Error(`the preview does not answer through the edge router (last: ${last})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function apply(
    input: ApplyInput,
    r: SandboxRecord,
  ): Promise<Omit<SyncOutcome, 'status' | 'error'> & { files: SandboxRecord['appliedFiles'] }> {
    const checkpoint = input.checkpointId
      ? await deps.builder.getCheckpoint(input.orgId, input.sessionId, input.checkpointId)
      : undefined;
    if (input.checkpointId && !checkpoint) throw new SyncRefused(`the checkpoint ${input.checkpointId} does not exist`);
    const target = toManifest(checkpoint?.files ?? []);
    const spec = RUNTIMES[r.config.runtime];
    const info = await engine.inspect(containerName(input.sessionId));
    const reusable =
      info?.State.Running === true &&
      info.Id === r.containerId &&
      info.Config.Labels[SANDBOX_CONFIG_LABEL] === r.configHash &&
      Array.isArray(r.appliedFiles);
    const base = { appliedCheckpointId: input.checkpointId, files: checkpoint?.files ?? [] };

    if (!reusable) {
      // Missing, crashed, stopped when idle, or made for another configuration: a new one with every file.
      if (info) await engine.remove(info.Id);
      const imageId = await images.usableImageId(baseImage[spec.image], input.orgId);
      const id = await engine.create({
        sessionId: input.sessionId,
        orgId: input.orgId,
        imageId,
        network: await networks.ensure(input.orgId),
        config: r.config,
        configHash: r.configHash,
      });
      // Recorded at once: a failure below leaves a container the next sync recognises as not holding the files.
      await deps.sandboxes.record(input.sessionId, { containerId: id, appliedFiles: null });
      const paths = Object.keys(target);
      await engine.put(id, spec.appDir, await read(input.orgId, target, paths));
      await docker.getContainer(id).start();
      await install(id, r, target);
      await engine.startApp(id);
      const port = await waitAnswering(id, r);
      await deps.edge.publish(previewRouteKey(input.sessionId), previewHost(input.sessionId, config.EDGE_DOMAIN), [
        upstreamOf(at, port),
      ]);
      await probeEdge(input.sessionId);
      return { ...base, action: 'recreate', copied: paths.length, deleted: 0, containerId: id };
    }

    const id = info.Id;
    const before = toManifest(r.appliedFiles ?? []);
    const changed = Object.keys(target).filter((p) => before[p]?.sha256 !== target[p]!.sha256);
    const deleted = Object.keys(before).filter((p) => !target[p]);
    const counts = { copied: changed.length, deleted: deleted.length, containerId: id };
    let action: SyncAction = 'none';
    if (changed.length + deleted.length > 0) {
      const depsChanged =
        spec.manifest !== undefined && before[spec.manifest]?.sha256 !== target[spec.manifest]?.sha256;
      const files = await read(input.orgId, target, changed);
      if (spec.liveFiles) {
        // Deletions first: a path that was a file may now be a directory of the new files.
        await engine.removeFiles(id, spec.appDir, deleted);
        await engine.put(id, spec.appDir, files);
        action = 'copy';
      } else {
        await engine.stopApp(id);
        await engine.removeFiles(id, spec.appDir, deleted);
        await engine.put(id, spec.appDir, files);
        if (depsChanged) await install(id, r, target);
        await engine.startApp(id);
        action = depsChanged ? 'reinstall' : 'restart';
      }
    }
    await waitAnswering(id, r);
    return { ...base, action, ...counts };
  }

  return {
    async applySandbox(input: ApplyInput): Promise<SyncOutcome> {
      const r = await deps.sandboxes.get(input.orgId, input.sessionId);
      if (!r)
        throw ApplicationFailure.create({
          nonRetryable: true,
          type: 'SandboxNotConfigured',
          message: 'no sandbox is configured for this session',
        });
      try {
        const { files, ...done } = await apply(input, r);
        await deps.sandboxes.record(input.sessionId, {
          status: 'running',
          appliedCheckpointId: done.appliedCheckpointId,
          appliedFiles: files,
          appliedConfigHash: r.configHash,
          containerId: done.containerId,
          lastSyncAt: new Date(),
          lastAction: done.action,
          error: null,
        });
        return { ...done, status: 'running', error: null };
      } catch (err) {
        if (!(err instanceof SyncRefused)) throw err;
        // What the container holds is no longer known: the next sync starts from a new one.
        await deps.sandboxes.record(input.sessionId, {
          status: 'failed',
          appliedFiles: null,
          lastSyncAt: new Date(),
          error: err.message,
        });
        return {
          status: 'failed',
          action: 'none',
          appliedCheckpointId: r.appliedCheckpointId ?? null,
          copied: 0,
          deleted: 0,
          containerId: r.containerId ?? null,
          error: err.message,
        };
      }
    },

    /** A sync that failed on our side after its retries: said so on the record, and the container made anew next time. */
    async markSandboxFailed(input: { sessionId: string; message: string }): Promise<void> {
      await deps.sandboxes.record(input.sessionId, {
        status: 'failed',
        appliedFiles: null,
        lastSyncAt: new Date(),
        error: input.message,
      });
    },

    /** Stops an idle sandbox (its container and its route's upstream); the next sync makes a new one. */
    async stopSandbox(input: { sessionId: string; orgId: string }): Promise<void> {
      const info = await engine.inspect(containerName(input.sessionId));
      if (info)
        await docker
          .getContainer(info.Id)
          .stop({ t: 1 })
          .catch((err: unknown) => {
            const code = (err as { statusCode?: number }).statusCode;
            if (code !== 304 && code !== 404) throw err;
          });
      await deps.edge.showStopped(previewRouteKey(input.sessionId), previewHost(input.sessionId, config.EDGE_DOMAIN));
      await deps.sandboxes.record(input.sessionId, { status: 'stopped', appliedFiles: null });
    },
  };
}
