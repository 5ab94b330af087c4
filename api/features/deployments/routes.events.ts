import { z } from 'zod';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ServerSentEvent } from '../../http/shapes';
import type { DeploymentsContext } from './compose';
import { decodeCursor, encodeCursor, EVENT_ID, EVENT_ID_MAX, EVENT_ID_REFUSED, START } from './event-cursor';
import { SlowFollower } from './events';
import { DeploymentIdParams } from './schemas';

/**
 * How long a stream dropped for reading too slowly may take to receive what is already buffered (and the event
 * saying why) before its connection is cut: a client that reads nothing at all holds nothing longer than this.
 */
const DROP_GRACE_MS = 5_000;

const EventsQuery = z
  .object({
    lastEventId: z.string().max(EVENT_ID_MAX).regex(EVENT_ID, EVENT_ID_REFUSED).optional().meta({
      description:
        'Same as the Last-Event-ID header, for clients that cannot set headers (EventSource on reconnect sets it).',
    }),
  })
  .strict();

const sse = (id: string, event: string, data: unknown) =>
  `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * GET /platform/deployments/{id}/events: the deployment as it happens — status, commands, the platform's lines and
 * the instances' output — as Server-Sent Events, open until the client leaves or the deployment is destroyed.
 */
export function deploymentEventRoutes(ctx: DeploymentsContext): RouteDef[] {
  const heartbeatMs = ctx.config.EVENTS_HEARTBEAT_MS;
  const maxBuffered = ctx.config.EVENTS_MAX_BUFFERED_BYTES;
  /** A client that took nothing for this long while events waited is gone or stuck: a few missed heartbeats. */
  const stallMs = 4 * heartbeatMs;
  return [
    route({
      method: 'get',
      path: '/deployments/:id/events',
      summary: 'Follow a deployment live: status, command progress, build/system lines and the app’s output as SSE',
      description:
        'text/event-stream, open until you close it or the deployment is destroyed (it no longer closes when the ' +
        'deployment settles). Events: `status` {status, message, at}; `command` {id, command, state: accepted | ' +
        'started | succeeded | failed, at, revision?, status?, replicas?, message?} for each command (the `id` is the ' +
        'one POST …/{command} answered); `log` {timestamp, stream, message, instance?}: build and system lines, and ' +
        'the instances’ stdout and stderr as they write them (with `instance`; JSON-encoded as GET …/logs returns ' +
        'them, so control characters arrive escaped: strip them before printing to a terminal); `settled` {status}: ' +
        'the deployment is running, stopped or failed with no command in progress, and everything before that was ' +
        'sent; said again after each status or command event that leaves it so (what `end` used to say, but the ' +
        'stream goes on); `destroyed` {deploymentId} then `end` {reason: "destroyed"}, after which the stream ' +
        'closes; `error` {message}: the server ended the stream (a failure, or a client reading too slowly) — ' +
        'reconnect with Last-Event-ID. Every event has an `id`; reconnect with `Last-Event-ID` to resume exactly ' +
        'after it (IDs of the older three-part form are accepted). A new stream replays the status, command and ' +
        'platform-log history, and instances’ output from when it opened (GET …/logs has the earlier output). A ' +
        '`: heartbeat` comment comes every 15 s.',
      tags: ['Deployments'],
      request: { params: DeploymentIdParams, query: EventsQuery },
      before: [ctx.can('deployment.read')],
      responses: {
        200: {
          description:
            'An event stream (text/event-stream), open until the client leaves or the deployment is destroyed',
          schema: ServerSentEvent,
          contentType: 'text/event-stream',
        },
      },
      handler: async ({ params, query }, req, res) => {
        const resumeFrom = req.get('last-event-id') ?? query.lastEventId;
        const from = resumeFrom ? decodeCursor(resumeFrom) : START;
        const abort = new AbortController();
        // The response's close, not the request's: it is what tells that the client left mid-stream.
        res.on('close', () => abort.abort());
        const principal = principalOf(req);
        // Before any header: an unknown or foreign ID still answers 404 in the platform shape.
        await ctx.deployments.get(principal, params.id);
        res.status(200).set({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
        });
        res.flushHeaders();
        let lastId = encodeCursor(from);
        /**
         * A client that reads slower than the deployment speaks is let go rather than buffered for without bound:
         * when more than the cap waits for it (in the follower, or here), or it took nothing for a few heartbeats
         * while something waited, it gets one last event saying why, a grace to read it, and then its connection is
         * cut. It resumes with Last-Event-ID like any other.
         */
        let dropped = false;
        const drop = (why: string) => {
          if (dropped) return;
          dropped = true;
          ctx.log.warn(
            { deploymentId: params.id, buffered: res.writableLength, max: maxBuffered, why },
            'deployment event stream dropped: the client reads too slowly',
          );
          res.write(
            sse(lastId, 'error', {
              message: `The client read too slowly (${why}); reconnect with Last-Event-ID to resume.`,
            }),
          );
          abort.abort();
          setTimeout(() => res.destroy(), DROP_GRACE_MS).unref();
        };
        /** Resolves once the response took what waited (true), or false when the client took nothing for too long. */
        const drained = () =>
          new Promise<boolean>((resolve) => {
            const done = (ok: boolean) => () => {
              clearTimeout(timer);
              res.off('drain', drained);
              res.off('close', closed);
              resolve(ok);
            };
            const drained = done(true);
            const closed = done(true);
            const timer = setTimeout(done(false), stallMs);
            res.on('drain', drained);
            res.on('close', closed);
          });
        const heartbeat = setInterval(() => {
          if (dropped || res.writableEnded) return;
          res.write(': heartbeat\n\n');
          if (res.writableLength > maxBuffered) drop(`more than ${maxBuffered} bytes waited for it`);
        }, heartbeatMs);
        const events = ctx.followDeployment(principal, params.id, from, abort.signal, { maxBuffered });
        try {
          for await (const e of events) {
            lastId = e.id;
            if (res.write(sse(e.id, e.type, e.data))) continue;
            // Nothing more is taken from the follower until the client took this: what waits, waits there.
            const ok = res.destroyed || (await drained());
            if (abort.signal.aborted) break;
            if (!ok) {
              drop(`it took nothing for ${stallMs / 1000} s`);
              break;
            }
          }
        } catch (err) {
          if (err instanceof SlowFollower) drop(`more than ${maxBuffered} bytes waited for it`);
          else {
            // Headers are gone: the failure becomes the stream's last event, its detail the server log's.
            ctx.log.warn({ err, deploymentId: params.id }, 'deployment event stream failed');
            res.write(sse(lastId, 'error', { message: 'The stream failed; reconnect with Last-Event-ID to resume.' }));
          }
        } finally {
          clearInterval(heartbeat);
          abort.abort();
          await events.return(undefined);
          res.end();
        }
      },
    }),
  ];
}
