import type { Client } from '@temporalio/client';

import {
  previewUrl,
  type SandboxConfig,
  type SandboxRuntime,
  type SandboxStore,
  sandboxView,
} from '../../../shared/builder/sandbox-store';
import type { Config } from '../../../shared/config';
import { AppError } from '../../../shared/errors';
import type { Principal } from '../../../shared/identity/service';
import { PLAN_POLICIES } from '../../../shared/plans';
import { syncSession } from '../../../workflows/sandbox/sync-client';
import type { BuilderService } from './service';

/** The runtime's port when the request names none (the sandbox activities' defaults, activities/sandbox-engine.ts). */
const DEFAULT_PORTS: Record<SandboxRuntime, number> = { node: 3000, static: 8080, python: 8000 };

/**
 * The live preview of a builder session (DESIGN.md §15): the api stores the configuration; the session's workflow
 * `sandbox/<sessionId>` applies heads to its container, one sync at a time, and answers each request with the sync
 * that covered it.
 */
export function createSandboxService(deps: {
  sessions: Pick<BuilderService, 'load'>;
  sandboxes: SandboxStore;
  temporal: Client;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'EDGE_DOMAIN' | 'EDGE_PORT' | 'SANDBOX_IDLE_S'>;
}) {
  const { sandboxes, config } = deps;

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

    /** Applies the session's head now; answers when a sync that covered it has ended. */
    async sync(p: Principal, id: string) {
      const s = await deps.sessions.load(p, id, 'write');
      if (!(await sandboxes.get(s.orgId, s._id)))
        throw new AppError(
          'INVALID_REQUEST',
          `This session has no sandbox yet; configure one with PUT /builder/sessions/${s._id}/sandbox first.`,
          { sessionId: s._id },
        );
      const outcome = await syncSession(deps.temporal, config, {
        sessionId: s._id,
        orgId: s.orgId,
        checkpointId: s.head?._id ?? null,
        seq: s.head?.seq ?? 0,
      });
      // Read again: the head may have moved during the sync, and inSync says so.
      const fresh = await deps.sessions.load(p, id, 'read');
      return { outcome, sandbox: sandboxView((await sandboxes.get(s.orgId, s._id))!, fresh.head) };
    },
  };
}

export type SandboxService = ReturnType<typeof createSandboxService>;
