import { randomUUID } from 'node:crypto';

import { type Client, WorkflowNotFoundError } from '@temporalio/client';

import {
  previewUrl,
  type SandboxConfig,
  type SandboxRuntime,
  type SandboxStore,
  sandboxView,
} from '@shared/builder/sandbox-store';
import { syncSession } from '@shared/builder/sandbox-sync';
import type { Config } from '@shared/config';
import { sandboxWorkflowId, type SyncOutcome } from '@shared/contracts/sandbox';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { OrgSettingsReader } from '@shared/org-settings/store';
import { PLAN_POLICIES } from '@shared/plans';
import { isWaitOver } from '@shared/temporal';

import type { BuilderService } from './service';

/** The runtime's port when the request names none (the sandbox activities' defaults, activities/sandbox/engine.ts). */
const DEFAULT_PORTS: Record<SandboxRuntime, number> = { node: 3000, static: 8080, python: 8000 };

/**
 * The live preview of a builder session (docs/architecture.md, "AI builder"): the api stores the configuration; the
 * session's workflow `sandbox/<sessionId>` applies heads to its container, one sync at a time, and answers each request
 * with the sync that covered it.
 */
export function createSandboxService(deps: {
  sessions: Pick<BuilderService, 'load'>;
  sandboxes: SandboxStore;
  temporal: Client;
  /** The organisation's sandbox idle timeout, given to a sandbox when its workflow starts. */
  orgSettings: OrgSettingsReader;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'EDGE_DOMAIN' | 'EDGE_PORT' | 'SANDBOX_IDLE_S' | 'SANDBOX_SYNC_WAIT_S'>;
}) {
  const { sandboxes, config } = deps;

  const noSandbox = (sessionId: string) =>
    new AppError(
      'INVALID_REQUEST',
      `This session has no sandbox yet; configure one with PUT /builder/sessions/${sessionId}/sandbox first.`,
      { sessionId },
    );

  /**
   * `wait` for at most SANDBOX_SYNC_WAIT_S: its value, or undefined when the sync is still running then (the
   * workflow carries on; nothing is cancelled but our wait).
   */
  async function within(wait: () => Promise<SyncOutcome>): Promise<SyncOutcome | undefined> {
    try {
      return await deps.temporal.withDeadline(Date.now() + config.SANDBOX_SYNC_WAIT_S * 1000, wait);
    } catch (err) {
      if (isWaitOver(err)) return undefined;
      throw err;
    }
  }

  /** The sync as both routes answer it, with the sandbox read now: the head may have moved during the sync. */
  async function progress(p: Principal, id: string, syncId: string, outcome: SyncOutcome | undefined) {
    const fresh = await deps.sessions.load(p, id, 'read');
    const record = await sandboxes.get(fresh.orgId, fresh._id);
    if (!record) throw noSandbox(fresh._id);
    return {
      id: syncId,
      state: outcome ? ('ended' as const) : ('running' as const),
      sync: outcome ?? null,
      sandbox: sandboxView(record, fresh.head),
    };
  }

  return {
    async configure(
      p: Principal,
      id: string,
      input: { runtime: SandboxRuntime; startCommand?: string; port?: number; env?: Record<string, string> },
    ) {
      const s = await deps.sessions.load(p, id, 'write');
      const sandbox: SandboxConfig = {
        runtime: input.runtime,
        ...(input.startCommand ? { startCommand: input.startCommand } : {}),
        port: input.port ?? DEFAULT_PORTS[input.runtime],
        env: input.env ?? {},
        limits: PLAN_POLICIES[p.org.plan].limits,
      };
      await sandboxes.configure(
        s._id,
        s.orgId,
        sandbox,
        previewUrl(s._id, { domain: config.EDGE_DOMAIN, port: config.EDGE_PORT }),
      );
      return sandboxView((await sandboxes.get(s.orgId, s._id))!, s.head);
    },

    /**
     * Applies the session's head: the sync that covered it when it ends within SANDBOX_SYNC_WAIT_S, else the
     * sync's ID, running, to follow with `follow`.
     */
    async sync(p: Principal, id: string) {
      const s = await deps.sessions.load(p, id, 'write');
      if (!(await sandboxes.get(s.orgId, s._id))) throw noSandbox(s._id);
      const syncId = randomUUID();
      const request = {
        sessionId: s._id,
        orgId: s.orgId,
        checkpointId: s.head?._id ?? null,
        seq: s.head?.seq ?? 0,
        idleS: (await deps.orgSettings.of(s.orgId)).sandboxIdleS,
      };
      return progress(p, id, syncId, await within(() => syncSession(deps.temporal, config, request, syncId)));
    },

    /** A sync asked for earlier: its outcome once it has ended, waiting at most SANDBOX_SYNC_WAIT_S for it. */
    async follow(p: Principal, id: string, syncId: string) {
      const s = await deps.sessions.load(p, id, 'read');
      if (!(await sandboxes.get(s.orgId, s._id))) throw noSandbox(s._id);
      const handle = deps.temporal.workflow.getHandle(sandboxWorkflowId(s._id)).getUpdateHandle<SyncOutcome>(syncId);
      try {
        return await progress(p, id, syncId, await within(() => handle.result()));
      } catch (err) {
        if (err instanceof WorkflowNotFoundError)
          throw new AppError(
            'SYNC_NOT_FOUND',
            `No sync ${syncId} in this session's sandbox: it is unknown, or older than the sandbox's recent syncs. GET the session for what the preview shows, or POST …/sandbox/sync again.`,
            { sessionId: s._id, syncId },
          );
        throw err;
      }
    },
  };
}

export type SandboxService = ReturnType<typeof createSandboxService>;
