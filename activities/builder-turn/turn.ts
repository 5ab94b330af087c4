import { ApplicationFailure, Context } from '@temporalio/activity';

import type { AiClient } from '@shared/ai/client';
import { AiProviderError } from '@shared/ai/errors';
import type { ChatMessage } from '@shared/ai/types';
import type { AiProviders } from '@shared/ai-providers/providers';
import { type BlobStore, checkManifest, fromManifest, sameManifest, toManifest } from '@shared/builder/files';
import { derivedUuid, type TurnFeed } from '@shared/builder/ids';
import type { BuilderStore } from '@shared/builder/store';
import type { CheckpointRecord, Manifest, TurnEventType } from '@shared/builder/types';
import type { TurnChanges, TurnError, TurnInput, TurnResult } from '@shared/contracts/builder-turn';
import { AppError } from '@shared/errors';
import type { AiUsage } from '@shared/usage/ai-usage';

import { HISTORY_MESSAGES, systemPrompt } from './prompt';
import { runTools, TOOLS } from './tools';

export interface TurnActivityDeps {
  store: BuilderStore;
  blobs: BlobStore;
  aiProviders: Pick<AiProviders, 'credentials'>;
  ai: Pick<AiClient, 'streamChat'>;
  feed?: Pick<TurnFeed, 'publish'>;
  /** Where each model step's tokens are kept for usage (shared/usage/ai-usage.ts). */
  usage?: Pick<AiUsage, 'record'>;
  /**
   * Called after a turn made its checkpoint and before turn.completed, with the turn's event writer: the sandbox's
   * sync plugs in here and emits `sandbox.synced` (bounded by the caller; the turn ends whatever it does).
   */
  onCheckpoint?: (
    turn: TurnInput,
    checkpoint: CheckpointRecord,
    emit: (type: TurnEventType, data: Record<string, unknown>) => Promise<void>,
  ) => Promise<void>;
}

/** Text deltas are stored in pieces of at most this age, so a token-per-chunk provider costs few writes. */
const DELTA_FLUSH_MS = 40;

export interface StepInput {
  turn: TurnInput;
  step: number;
  base: string | null;
  transcript: ChatMessage[];
  changes: TurnChanges;
}

export interface StepResult {
  transcript: ChatMessage[];
  changes: TurnChanges;
  text: string;
  /** The model asked for tools and wants to go on. */
  more: boolean;
}

/** The model steps and the ends of a builder turn (workflows/builder-turn), built from their dependencies. */
export function createTurnActivities(deps: TurnActivityDeps) {
  const { store } = deps;

  function emitter(turn: TurnInput) {
    const write = store.eventWriter({ turnId: turn.turnId, sessionId: turn.sessionId, orgId: turn.orgId });
    const log = Context.current().log;
    let announced = true;
    return async (type: TurnEventType, data: Record<string, unknown> = {}) => {
      await write(type, data);
      await deps.feed?.publish(turn.turnId).catch((err: unknown) => {
        // The event is stored; tailing streams recheck the store every 500 ms (createTurnFeed), so a lost wake-up
        // only delays them. Said once per activity, not once per text delta.
        if (announced) log.warn('turn events are not announced on Redis', { turnId: turn.turnId, error: String(err) });
        announced = false;
      });
    };
  }

  async function baseManifest(turn: TurnInput, base: string | null): Promise<Manifest> {
    if (!base) return {};
    const c = await store.getCheckpoint(turn.orgId, turn.sessionId, base);
    return toManifest(c?.files ?? []);
  }

  const applyChanges = (m: Manifest, changes: TurnChanges): Manifest => {
    const out = { ...m };
    for (const [path, entry] of Object.entries(changes)) {
      if (entry) out[path] = entry;
      else delete out[path];
    }
    return out;
  };

  return {
    /** Stores the user's message and turn.started; answers the head the turn works from and the conversation. */
    async beginTurn(turn: TurnInput): Promise<{ base: string | null; transcript: ChatMessage[] }> {
      const head = await store.head(turn.sessionId);
      const messageId = derivedUuid(turn.turnId, 'user');
      const history = (await store.listMessages(turn.sessionId, HISTORY_MESSAGES)).filter(
        (m) => !m.reverted && m._id !== messageId && m.content.trim() !== '',
      );
      await store.insertMessage({
        _id: messageId,
        sessionId: turn.sessionId,
        orgId: turn.orgId,
        role: 'user',
        content: turn.content,
        createdAt: new Date(),
        baseSeq: head?.seq ?? 0,
        turnId: turn.turnId,
      });
      if (!(await store.hasEvent(turn.turnId, 'turn.started')))
        await emitter(turn)('turn.started', {
          turnId: turn.turnId,
          messageId,
          providerId: turn.providerId,
          model: turn.model,
          head: head?._id ?? null,
        });
      const transcript: ChatMessage[] = history.map((m) =>
        m.role === 'user' ? { role: 'user', content: m.content } : { role: 'assistant', content: m.content },
      );
      transcript.push({ role: 'user', content: turn.content });
      return { base: head?._id ?? null, transcript };
    },

    /**
     * One model call and the tools it asked for. Not retried (a retry after streaming would repeat the text the
     * session already shows): the adapter retries rate limits and outages before the first event, and any failure
     * ends the turn with its typed error.
     */
    async modelStep(input: StepInput): Promise<StepResult> {
      const { turn } = input;
      const emit = emitter(turn);
      const creds = await deps.aiProviders.credentials(turn.orgId, turn.providerId);
      if (!creds?.enabled)
        throw ApplicationFailure.create({
          type: 'provider_missing',
          nonRetryable: true,
          message: `The session's AI provider was ${creds ? 'disabled' : 'removed'}; choose another with PUT /builder/sessions/${turn.sessionId}/provider.`,
        });
      const files = applyChanges(await baseManifest(turn, input.base), input.changes);
      let text = '';
      let pending = '';
      let pendingSince = 0;
      let flushed = false;
      const flush = async () => {
        if (!pending) return;
        const piece = pending;
        pending = '';
        flushed = true;
        await emit('message.delta', { text: piece });
      };
      const signal = Context.current().cancellationSignal;
      try {
        const toolCalls = [];
        let stop = '';
        let tokens: { inputTokens: number; outputTokens: number } | undefined;
        for await (const event of deps.ai.streamChat({
          ...creds,
          model: turn.model,
          system: systemPrompt(files),
          messages: input.transcript,
          tools: TOOLS,
          signal,
        })) {
          Context.current().heartbeat();
          if (event.type === 'text') {
            text += event.text;
            if (!pending) pendingSince = Date.now();
            pending += event.text;
            // The first words go out at once (time to first event); later ones in small batches.
            if (!flushed || Date.now() - pendingSince >= DELTA_FLUSH_MS) await flush();
          } else if (event.type === 'tool_call') {
            await flush();
            toolCalls.push(event.call);
          } else if (event.type === 'stop') {
            stop = event.reason;
          } else if (event.type === 'usage') {
            tokens = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
          }
        }
        await flush();
        if (tokens && deps.usage) {
          const session = await store.getSession(turn.orgId, turn.sessionId);
          // One entry per step: the activity's ID is the step's, the same on a retried attempt.
          await deps.usage.record({
            _id: `${turn.turnId}:${Context.current().info.activityId}`,
            orgId: turn.orgId,
            projectId: session?.projectId ?? null,
            sessionId: turn.sessionId,
            turnId: turn.turnId,
            ...tokens,
            at: new Date(),
          });
        }
        const ran = await runTools(toolCalls, {
          orgId: turn.orgId,
          files,
          changes: { ...input.changes },
          blobs: deps.blobs,
          emit,
        });
        const transcript: ChatMessage[] = [
          ...input.transcript,
          { role: 'assistant', content: text, ...(ran.calls.length ? { toolCalls: ran.calls } : {}) },
          ...ran.results,
        ];
        return { transcript, changes: ran.changes, text, more: toolCalls.length > 0 && stop !== 'max_tokens' };
      } catch (err) {
        // The step's own error is what the turn ends with; text that could not be stored is only logged.
        await flush().catch((lost: unknown) =>
          Context.current().log.warn('the text of a failed step was not stored', {
            turnId: turn.turnId,
            error: String(lost),
          }),
        );
        if (err instanceof AiProviderError)
          throw ApplicationFailure.create({ type: err.code, message: err.message, nonRetryable: true });
        throw err;
      }
    },

    /**
     * Ends a turn: its changes as a checkpoint on the session's head as it is now (a save made meanwhile is kept),
     * the assistant's message, the error it ended with, turn.completed, and the session freed for the next turn.
     * Idempotent: a retried attempt finds what the first one wrote (derived IDs, events written once).
     */
    async finishTurn(input: {
      turn: TurnInput;
      changes: TurnChanges;
      text: string;
      error: TurnError | null;
    }): Promise<TurnResult> {
      const { turn } = input;
      const emit = emitter(turn);
      const messageId = derivedUuid(turn.turnId, 'assistant');
      const checkpointId = derivedUuid(turn.turnId, 'checkpoint');
      let error = input.error;
      if (error && !(await store.hasEvent(turn.turnId, 'error'))) await emit('error', { ...error });

      let checkpoint = await store.getCheckpoint(turn.orgId, turn.sessionId, checkpointId);
      let baseSeq = 0;
      for (let attempt = 0; !checkpoint && Object.keys(input.changes).length > 0 && attempt < 20; attempt++) {
        const head = await store.head(turn.sessionId);
        baseSeq = head?.seq ?? 0;
        const before = toManifest(head?.files ?? []);
        const after = applyChanges(before, input.changes);
        if (head && sameManifest(before, after)) break;
        try {
          checkManifest(after);
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          error ??= { code: 'internal', message: `The turn's changes were not saved: ${err.message}` };
          await emit('error', { ...error });
          break;
        }
        checkpoint = await store.appendCheckpoint(head, {
          _id: checkpointId,
          sessionId: turn.sessionId,
          orgId: turn.orgId,
          files: fromManifest(after),
          createdBy: turn.userId,
          reason: 'turn',
          messageId,
        });
        // Lost the race to a save, or an earlier attempt of this activity already wrote it.
        checkpoint ??= await store.getCheckpoint(turn.orgId, turn.sessionId, checkpointId);
      }
      if (checkpoint && !(await store.hasEvent(turn.turnId, 'checkpoint.created'))) {
        await emit('checkpoint.created', {
          checkpointId: checkpoint._id,
          seq: checkpoint.seq,
          files: checkpoint.files.length,
        });
        // The preview follows the checkpoint when it can; the turn ends whatever the sync does.
        if (deps.onCheckpoint)
          await deps.onCheckpoint(turn, checkpoint, emit).catch((err: unknown) =>
            Context.current().log.warn('the sandbox was not synced to the turn checkpoint', {
              turnId: turn.turnId,
              checkpointId: checkpoint._id,
              error: String(err),
            }),
          );
      }
      const userMessage = await store.getMessage(turn.sessionId, derivedUuid(turn.turnId, 'user'));
      await store.insertMessage({
        _id: messageId,
        sessionId: turn.sessionId,
        orgId: turn.orgId,
        role: 'assistant',
        content: input.text,
        createdAt: new Date(),
        baseSeq: userMessage?.baseSeq ?? baseSeq,
        turnId: turn.turnId,
        ...(checkpoint ? { checkpointId: checkpoint._id } : {}),
        ...(error ? { error } : {}),
      });
      const result: TurnResult = {
        turnId: turn.turnId,
        status: error ? 'failed' : 'completed',
        messageId,
        checkpointId: checkpoint?._id ?? null,
        error,
      };
      if (!(await store.hasEvent(turn.turnId, 'turn.completed'))) await emit('turn.completed', { ...result });
      await store.releaseTurn(turn.sessionId, turn.turnId);
      return result;
    },
  };
}
