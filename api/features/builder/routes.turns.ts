import type { Request } from 'express';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, ServerSentEvent, success } from '../../http/shapes';
import type { BuilderContext } from './compose';
import {
  MessageRequest,
  SessionIdParams,
  TURN_EVENTS_TEXT,
  TurnEventsParams,
  TurnEventsQuery,
  TurnResultView,
  TurnRunningView,
} from './schemas';
import { checkpointView, messageView } from './views';

/** Last-Event-ID as the seq to resume after (0: from the start); anything else is ignored, as EventSource does. */
const lastEventId = (req: Request): number => {
  const v = req.get('last-event-id');
  return v && /^\d{1,9}$/.test(v) ? Number(v) : 0;
};

const TURN_TEXT =
  'The model sees the file tree and the conversation, reads the files it asks for, and edits through tools (write_file, delete_file, rename_file); the turn ends with a checkpoint of what it changed and the assistant message. A provider that refuses the key ends the turn with error provider_auth; a rate limit is retried a bounded number of times, then ends it with rate_limited; either way the session takes the next message. One turn at a time per session: a second is 409 naming the running one.';

export function builderTurnRoutes(deps: Pick<BuilderContext, 'builder' | 'builderTurns' | 'config'>): RouteDef[] {
  const { builder, builderTurns: turns } = deps;
  const waitMs = deps.config.BUILDER_MESSAGE_WAIT_S * 1000;
  const tags = ['AI builder'];
  return [
    route({
      method: 'post',
      path: '/builder/sessions/:id/messages',
      summary: 'Send a message: runs a model turn and answers when it has ended',
      description: `${TURN_TEXT} Answers 200 with status failed and the typed error when the turn ended with one.`,
      tags,
      request: { params: SessionIdParams, body: MessageRequest },
      before: [],
      audit: { resource: 'message', action: 'message.create', idField: 'turnId' },
      responses: {
        200: { description: 'The ended turn', schema: success(TurnResultView) },
        202: {
          description:
            'The turn had not ended after BUILDER_MESSAGE_WAIT_S (600 s by default): it goes on; follow it at eventsUrl',
          schema: success(TurnRunningView),
        },
        409: { description: 'A turn is running in this session (details.turnId)' },
      },
      handler: async ({ params, body }, req, res) => {
        const { turnId, sessionId } = await turns.start(principalOf(req), params.id, body);
        const r = await turns.result(sessionId, turnId, new Date(Date.now() + waitMs));
        if (!r) {
          res.status(202).json(
            ok({
              turnId,
              status: 'running' as const,
              eventsUrl: `${req.baseUrl}/builder/sessions/${sessionId}/turns/${turnId}/events`,
            }),
          );
          return;
        }
        const s = await builder.load(principalOf(req), sessionId, 'read');
        const [message, checkpoint] = await Promise.all([
          builder.message(s._id, r.messageId),
          r.checkpointId ? builder.checkpoint(s, r.checkpointId) : undefined,
        ]);
        res.json(
          ok({
            turnId,
            status: r.status,
            message: message ? messageView(message) : null,
            checkpoint: checkpoint ? checkpointView(checkpoint) : null,
            error: r.error,
          }),
        );
      },
    }),
    route({
      method: 'post',
      path: '/builder/sessions/:id/messages/stream',
      summary: 'Send a message and stream its turn as Server-Sent Events',
      description: `${TURN_TEXT} ${TURN_EVENTS_TEXT}`,
      tags,
      request: { params: SessionIdParams, body: MessageRequest },
      before: [],
      audit: { resource: 'message', action: 'message.create' },
      responses: {
        200: {
          description: 'An event stream (text/event-stream), ending after turn.completed',
          schema: ServerSentEvent,
          contentType: 'text/event-stream',
        },
        409: { description: 'A turn is running in this session (details.turnId)' },
      },
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        const { turnId, sessionId } = await turns.start(p, params.id, body);
        await turns.stream(await builder.load(p, sessionId, 'read'), turnId, lastEventId(req), res);
      },
    }),
    route({
      method: 'get',
      path: '/builder/sessions/:id/turns/:turnId/events',
      summary: "Stream a turn's events (again) as Server-Sent Events, from Last-Event-ID or ?after= on",
      description: TURN_EVENTS_TEXT,
      tags,
      request: { params: TurnEventsParams, query: TurnEventsQuery },
      before: [],
      responses: {
        200: {
          description: 'An event stream (text/event-stream), ending after turn.completed',
          schema: ServerSentEvent,
          contentType: 'text/event-stream',
        },
      },
      handler: async ({ params, query }, req, res) => {
        const s = await builder.load(principalOf(req), params.id, 'read');
        await turns.stream(s, params.turnId, query.after ?? lastEventId(req), res);
      },
    }),
  ];
}
