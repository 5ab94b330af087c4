import { z } from 'zod';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ServerSentEvent } from '../../http/shapes';
import type { DeploymentsContext } from './compose';
import { decodeCursor, encodeCursor, EVENT_ID, EVENT_ID_REFUSED, START } from './events';
import { DeploymentIdParams } from './schemas';

/** A comment line often enough that proxies and clients keep an idle stream open. */
const HEARTBEAT_MS = 15_000;

const EventsQuery = z
  .object({
    lastEventId: z.string().max(64).regex(EVENT_ID, EVENT_ID_REFUSED).optional().meta({
      description:
        'Same as the Last-Event-ID header, for clients that cannot set headers (EventSource on reconnect sets it).',
    }),
  })
  .strict();

/** GET /platform/deployments/{id}/events: status changes and the platform's log lines as Server-Sent Events. */
export function deploymentEventRoutes(ctx: DeploymentsContext): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/deployments/:id/events',
      summary: 'Follow a deployment: status changes and build/system log lines as Server-Sent Events',
      description:
        'text/event-stream with events `status` {status, message, at}, `log` {timestamp, stream, message}, `end` {status} ' +
        '(the deployment settled: running, stopped or failed; the stream closes) and `destroyed`. Every event has an `id`; ' +
        'reconnect with `Last-Event-ID` to resume exactly after it. A `: heartbeat` comment comes every 15 s. ' +
        'The container’s own output is at GET /deployments/{id}/logs.',
      tags: ['Deployments'],
      request: { params: DeploymentIdParams, query: EventsQuery },
      before: [ctx.can('deployment.read')],
      responses: {
        200: {
          description: 'An event stream (text/event-stream), ending when the deployment settles',
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
        const events = ctx.followDeployment(principal, params.id, from, abort.signal);
        res.status(200).set({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
        });
        res.flushHeaders();
        const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
        let lastId = encodeCursor(from);
        try {
          for await (const e of events) {
            res.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`);
            lastId = e.id;
          }
        } catch (err) {
          // Headers are gone: the failure becomes the stream's last event, its detail the server log's.
          ctx.log.warn({ err, deploymentId: params.id }, 'deployment event stream failed');
          res.write(
            `id: ${lastId}\nevent: error\ndata: ${JSON.stringify({ message: 'The stream failed; reconnect with Last-Event-ID to resume.' })}\n\n`,
          );
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
