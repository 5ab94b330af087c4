import { createHash } from 'node:crypto';

import type { Db } from 'mongodb';

import { guard } from '../db/mongo';
import { type EdgeAddressing, shortId } from '../edge';
import { isTaken } from './store';
import type { CheckpointRecord, Session } from './types';

/**
 * The live preview of a builder session (docs/architecture.md, "AI builder"): one container per session, synced by the
 * workflow `sandbox/<sessionId>`. Two writers, on disjoint fields, each writing whole values (FerretDB has no atomic
 * read-modify-write): the api writes the configuration (PUT …/sandbox), the session's sandbox workflow — one command at
 * a time — writes what it applied.
 */

export const SANDBOX_RUNTIMES = ['node', 'static', 'python'] as const;
export type SandboxRuntime = (typeof SANDBOX_RUNTIMES)[number];

export const SANDBOX_STATUSES = ['configured', 'running', 'stopped', 'failed'] as const;
export type SandboxStatus = (typeof SANDBOX_STATUSES)[number];

/**
 * What the last sync did: nothing, copied files, copied and restarted, reinstalled dependencies, or a new container.
 */
export const SYNC_ACTIONS = ['none', 'copy', 'restart', 'reinstall', 'recreate'] as const;
export type SyncAction = (typeof SYNC_ACTIONS)[number];

/** The label that names a sandbox container's session (it carries the org and instance labels too). */
export const SANDBOX_SESSION_LABEL = 'dev.slipway.builder-session';
/** The hash of the configuration a container was made with: another configuration needs another container. */
export const SANDBOX_CONFIG_LABEL = 'dev.slipway.sandbox-config';

export interface SandboxConfig {
  runtime: SandboxRuntime;
  /** Run by `sh -c` in the app directory; absent: the runtime's default (sandbox activities). */
  startCommand?: string;
  port: number;
  env: Record<string, string>;
  /** The org's plan limits when it was configured. */
  limits: { memoryMb: number; cpus: number; pids: number };
}

export interface SandboxRecord {
  /** The session's ID. */
  _id: string;
  orgId: string;
  config: SandboxConfig;
  configHash: string;
  configuredAt: Date;
  previewUrl: string;
  // Written by the sandbox workflow only:
  status?: SandboxStatus;
  appliedCheckpointId?: string | null;
  /** null: what the container holds is not known (a failed or stopped sync); the next sync makes a new one. */
  appliedFiles?: CheckpointRecord['files'] | null;
  appliedConfigHash?: string;
  containerId?: string | null;
  lastSyncAt?: Date;
  lastAction?: SyncAction;
  error?: string | null;
}

/** What a sync (the workflow's apply) wrote, minus the files. */
export type AppliedState = Required<
  Pick<SandboxRecord, 'status' | 'appliedCheckpointId' | 'appliedConfigHash' | 'containerId' | 'lastSyncAt' | 'error'>
> &
  Pick<SandboxRecord, 'lastAction' | 'appliedFiles'>;

export const configHash = (c: SandboxConfig) =>
  createHash('sha256')
    .update(JSON.stringify([c.runtime, c.startCommand ?? null, c.port, Object.entries(c.env).sort(), c.limits]))
    .digest('hex')
    .slice(0, 16);

/** The edge router's key and host of a session's preview (a route of its own, never a deployment's). */
export const previewRouteKey = (sessionId: string) => `sandbox-${sessionId}`;
export const previewHost = (sessionId: string, domain: string) =>
  `preview-${shortId(sessionId)}.${domain.toLowerCase().replace(/\.$/, '')}`;
export const previewUrl = (sessionId: string, at: EdgeAddressing) => {
  const host = previewHost(sessionId, at.domain);
  return at.port === 80 ? `http://${host}` : `http://${host}:${at.port}`;
};

/** The sandbox as session and sync responses show it; inSync says whether the preview shows the head. */
export function sandboxView(r: SandboxRecord, head: CheckpointRecord | undefined) {
  const applied = r.appliedCheckpointId ?? null;
  return {
    runtime: r.config.runtime,
    startCommand: r.config.startCommand ?? null,
    port: r.config.port,
    envNames: Object.keys(r.config.env).sort(),
    status: r.status ?? 'configured',
    previewUrl: r.previewUrl,
    appliedCheckpointId: applied,
    headCheckpointId: head?._id ?? null,
    inSync: r.status === 'running' && applied === (head?._id ?? null) && r.appliedConfigHash === r.configHash,
    lastSyncAt: r.lastSyncAt?.toISOString() ?? null,
    lastAction: r.lastAction ?? null,
    containerId: r.containerId ?? null,
    error: r.error ?? null,
  };
}

export type SandboxView = ReturnType<typeof sandboxView>;

export function createSandboxStore(db: Db) {
  const sandboxes = db.collection<SandboxRecord>('builder_sandboxes');

  const get = async (orgId: string, sessionId: string) =>
    (await guard('sandbox.get', () => sandboxes.findOne({ _id: sessionId, orgId }))) ?? undefined;

  return {
    get,

    /** The api's write: the configuration, whole. An upsert by _id; the workflow's fields are left as they are. */
    async configure(sessionId: string, orgId: string, config: SandboxConfig, url: string): Promise<void> {
      const set = { orgId, config, configHash: configHash(config), configuredAt: new Date(), previewUrl: url };
      try {
        await guard('sandbox.configure', () =>
          sandboxes.updateOne({ _id: sessionId, orgId }, { $set: set }, { upsert: true }),
        );
      } catch (err) {
        if (!isTaken(err)) throw err;
        // Two first configurations at once: one upsert inserted, the other now finds the document.
        await guard('sandbox.configure', () => sandboxes.updateOne({ _id: sessionId, orgId }, { $set: set }));
      }
    },

    /** The workflow's write: what it applied (or that it stopped or failed). */
    record: (sessionId: string, state: Partial<AppliedState>) =>
      guard('sandbox.record', () => sandboxes.updateOne({ _id: sessionId }, { $set: state })),

    /**
     * The sandbox part of a session's response (the builder service's `sandboxOf`): null without a sandbox.
     * The session carries its head, so inSync compares against what the caller sees.
     */
    async viewOf(session: Session): Promise<SandboxView | null> {
      const r = await get(session.orgId, session._id);
      return r ? sandboxView(r, session.head) : null;
    },
  };
}

export type SandboxStore = ReturnType<typeof createSandboxStore>;
