import { randomUUID } from 'node:crypto';

import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import type { Response } from 'express';

import type { AiProviders } from '@shared/ai-providers/providers';
import { derivedUuid, type TurnFeed } from '@shared/builder/ids';
import type { BuilderStore } from '@shared/builder/store';
import type { RunningTurnRecord, Session } from '@shared/builder/types';
import {
  BUILDER_TURN_WORKFLOW,
  builderTurnWorkflowId,
  type TurnInput,
  type TurnResult,
} from '@shared/contracts/builder-turn';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { ignore } from '@shared/ignore';
import type { Logger } from '@shared/logger';
import { logFailure } from '@shared/request-context';
import { isWaitOver } from '@shared/temporal';

import type { BuilderService } from './service';

/** A marker this old whose workflow Temporal does not know is a crash between claiming and starting: stale. */
const UNSTARTED_MARKER_MS = 30_000;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

const turnNotFound = (turnId: string) =>
  new AppError('TURN_NOT_FOUND', `No turn ${turnId} in this session.`, { turnId });

/**
 * Model turns of a session: one at a time per session (the store's running-turn marker), each a
 * workflow `builder-turn/<sessionId>/<turnId>` whose stored events the HTTP stream tails.
 */
export function createTurnService(deps: {
  store: BuilderStore;
  sessions: Pick<BuilderService, 'load'>;
  aiProviders: Pick<AiProviders, 'get' | 'list'>;
  temporal: Client;
  taskQueue: string;
  feed: TurnFeed;
  log: Pick<Logger, 'warn'>;
}) {
  const { store, temporal } = deps;

  async function providerOf(s: Session) {
    const provider = s.providerId
      ? await deps.aiProviders.get(s.orgId, s.providerId)
      : (await deps.aiProviders.list(s.orgId, { enabledOnly: true }))[0];
    if (!provider?.enabled)
      throw new AppError(
        'INVALID_REQUEST',
        s.providerId
          ? `This session's AI provider was removed or disabled; choose another with PUT /builder/sessions/${s._id}/provider.`
          : 'No AI provider is enabled in this organisation; an owner or admin adds one with POST /ai-providers.',
        { sessionId: s._id },
      );
    return { providerId: provider._id, model: s.model ?? provider.defaultModel };
  }

  /** Whether the workflow of a marker's turn can still end it (and free the session) itself. */
  async function alive(marker: RunningTurnRecord): Promise<boolean> {
    try {
      const d = await temporal.workflow.getHandle(builderTurnWorkflowId(marker._id, marker.turnId)).describe();
      return d.status.name === 'RUNNING';
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      return Date.now() - marker.startedAt.getTime() < UNSTARTED_MARKER_MS;
    }
  }

  async function claim(marker: RunningTurnRecord): Promise<'claimed' | 'same'> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const holder = await store.claimTurn(marker);
      if (!holder) return 'claimed';
      if (holder.turnId === marker.turnId) return 'same';
      if (holder.turnId && (await alive(holder)))
        throw new AppError(
          'CONFLICT',
          `A turn (${holder.turnId}) is already running in this session; wait for it to end (GET /builder/sessions/${marker._id}/turns/${holder.turnId}/events), then send again.`,
          { turnId: holder.turnId },
        );
      // Its workflow ended without freeing the session (it was terminated): free it, only if still that turn's.
      if (holder.turnId) await store.releaseTurn(marker._id, holder.turnId);
    }
    throw new AppError('CONFLICT', 'Another message is being sent to this session; retry in a moment.', {});
  }

  return {
    /** Starts the turn of a message, or finds the running or finished turn of the same idempotencyKey. */
    async start(p: Principal, sessionId: string, input: { content: string; idempotencyKey?: string }) {
      const s = await deps.sessions.load(p, sessionId, 'write');
      const turnId = input.idempotencyKey ? derivedUuid('turn', s._id, input.idempotencyKey) : randomUUID();
      const handle = temporal.workflow.getHandle<() => Promise<TurnResult>>(builderTurnWorkflowId(s._id, turnId));
      if (input.idempotencyKey) {
        const known = await handle.describe().then(
          () => true,
          (err: unknown) => {
            if (err instanceof WorkflowNotFoundError) return false;
            throw err;
          },
        );
        if (known) return { turnId, sessionId: s._id };
      }
      const { providerId, model } = await providerOf(s);
      if ((await claim({ _id: s._id, turnId, orgId: s.orgId, startedAt: new Date() })) === 'same')
        return { turnId, sessionId: s._id };
      const turn: TurnInput = {
        turnId,
        sessionId: s._id,
        orgId: s.orgId,
        userId: p.user._id,
        content: input.content,
        providerId,
        model,
      };
      const emit = store.eventWriter({ turnId, sessionId: s._id, orgId: s.orgId });
      // A lost announcement costs a stream at most one recheck interval of the turn feed (shared/builder/ids.ts).
      const announce = () =>
        deps.feed.publish(turnId).catch(ignore("the turn's streams recheck the store on their own"));
      // Written here rather than by the workflow's first activity: a stream shows the turn at once (the workflow
      // does not write it again).
      await emit('turn.started', {
        turnId,
        messageId: derivedUuid(turnId, 'user'),
        providerId,
        model,
        head: s.head?._id ?? null,
      });
      await announce();
      try {
        await temporal.workflow.start(BUILDER_TURN_WORKFLOW, {
          workflowId: builderTurnWorkflowId(s._id, turnId),
          taskQueue: deps.taskQueue,
          args: [turn],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        });
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return { turnId, sessionId: s._id };
        // The turn never ran: its stream ends, and the session is free again.
        await emit('turn.completed', {
          turnId,
          status: 'failed',
          error: { code: 'internal', message: 'The turn could not start; send the message again.' },
        }).catch(
          logFailure(
            deps.log,
            'a turn that could not start was not marked failed; its stream ends when it stops waiting',
            { turnId },
          ),
        );
        await announce();
        // A marker left behind is claimed again once it is older than UNSTARTED_MARKER_MS.
        await store.releaseTurn(s._id, turnId).catch(
          logFailure(
            deps.log,
            `the session was not freed of a turn that could not start; it frees itself in ${UNSTARTED_MARKER_MS / 1000} s`,
            {
              turnId,
            },
          ),
        );
        throw err;
      }
      return { turnId, sessionId: s._id };
    },

    /** The turn's outcome, once it has ended; undefined when it has not by `deadline` (it goes on). */
    async result(sessionId: string, turnId: string, deadline?: Date): Promise<TurnResult | undefined> {
      const wait = () =>
        temporal.workflow.getHandle<() => Promise<TurnResult>>(builderTurnWorkflowId(sessionId, turnId)).result();
      if (!deadline) return wait();
      try {
        return await temporal.workflow.withDeadline(deadline, wait);
      } catch (err) {
        if (isWaitOver(err)) return undefined;
        throw err;
      }
    },

    /**
     * Writes the turn's stored events after `afterSeq` as Server-Sent Events, then each new one as it is stored,
     * until turn.completed or the client leaves (the turn goes on without it).
     */
    async stream(s: Session, turnId: string, afterSeq: number, res: Response): Promise<void> {
      const q = { orgId: s.orgId, sessionId: s._id, turnId };
      const watch = await deps.feed.watch(turnId);
      let gone = false;
      res.on('close', () => {
        gone = true;
      });
      try {
        let last = afterSeq;
        let started = false;
        let quietSince = Date.now();
        for (;;) {
          const batch = await store.eventsAfter(q, last);
          if (!started) {
            // Known by its events or by being the session's running turn; anything else is not this session's turn.
            if (batch.length === 0 && afterSeq === 0 && (await store.runningTurn(s._id))?.turnId !== turnId)
              throw turnNotFound(turnId);
            res.status(200);
            res.setHeader('content-type', 'text/event-stream; charset=utf-8');
            res.setHeader('cache-control', 'no-cache, no-transform');
            res.setHeader('x-accel-buffering', 'no');
            res.flushHeaders();
            started = true;
          }
          for (const e of batch) {
            res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ ...e.data, turnId, seq: e.seq })}\n\n`);
            last = e.seq;
            if (e.type === 'turn.completed') return;
          }
          if (gone) return;
          if (batch.length > 0) {
            quietSince = Date.now();
            continue;
          }
          // The turn's workflow ended without writing turn.completed (terminated by an operator): nothing will come.
          if ((await store.runningTurn(s._id))?.turnId !== turnId) {
            const tail = await store.eventsAfter(q, last);
            if (tail.length === 0) return;
            continue;
          }
          if (Date.now() - quietSince >= KEEPALIVE_MS) {
            res.write(': keep-alive\n\n');
            quietSince = Date.now();
          }
          await watch.changed(KEEPALIVE_MS);
        }
      } finally {
        watch.close();
        if (res.headersSent) res.end();
      }
    },
  };
}

export type TurnService = ReturnType<typeof createTurnService>;
