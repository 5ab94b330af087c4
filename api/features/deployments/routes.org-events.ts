import { z } from 'zod';

import type { Visibility } from '@shared/authz/authorize';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ServerSentEvent } from '../../http/shapes';
import type { DeploymentsContext } from './compose';
import type { OrgEvent } from './org-events';

/** How long a stream trusts the projects its caller could see when it opened before asking again. */
const VISIBILITY_MS = 60_000;

const NoQuery = z.object({}).strict();

/**
 * GET /platform/deployment-events: the status of every deployment the caller may see, as it changes, on ONE
 * connection (a browser has six per host: one per deployment would not do for a list).
 */
export function orgDeploymentEventRoutes(ctx: DeploymentsContext): RouteDef[] {
  const heartbeatMs = ctx.config.EVENTS_HEARTBEAT_MS;
  const maxBuffered = ctx.config.EVENTS_MAX_BUFFERED_BYTES;
  return [
    route({
      method: 'get',
      path: '/deployment-events',
      summary: 'Follow the status of every deployment of the organisation the caller may see, as SSE, on one stream',
      description:
        'text/event-stream, open until you close it. First a `ready` event {} once the stream is live: every change ' +
        'after it arrives. Then `status` {deploymentId, status, message, at} whenever a deployment the caller may ' +
        'see changes status (deployments of projects it is not a member of, below org admin, are left out, as in ' +
        'GET /platform/deployments); `destroyed` {deploymentId}; `resync` {reason} when the server may have missed ' +
        'changes (read GET /platform/deployments again). Not resumable: on each (re)connect read the list, then ' +
        'apply the events; events carry no `id`. A `: heartbeat` comment comes every 15 s. For one deployment’s ' +
        'logs and commands use GET /platform/deployments/{id}/events.',
      tags: ['Deployments'],
      request: { query: NoQuery },
      before: [ctx.can('deployment.read')],
      responses: {
        200: {
          description: 'An event stream (text/event-stream), open until the client leaves',
          schema: ServerSentEvent,
          contentType: 'text/event-stream',
        },
      },
      handler: async (_input, req, res) => {
        // Open until the client leaves (the handler returns with the stream, like the deployment's own); heard from
        // the start, so a client gone during the reads below is not waited for.
        const closed = new Promise<void>((resolve) => res.on('close', resolve));
        const principal = principalOf(req);
        let visibility: Visibility = await ctx.authz.visibility(principal);
        let readAt = Date.now();
        const sees = async (projectId: string | undefined) => {
          if (Date.now() - readAt > VISIBILITY_MS) {
            // A membership removed since the stream opened stops its events within a minute.
            visibility = await ctx.authz.visibility(principal);
            readAt = Date.now();
          }
          return ctx.authz.sees(visibility, projectId);
        };
        res.status(200).set({
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
        });
        res.flushHeaders();
        const send = (e: OrgEvent | { type: 'ready'; data: object }) => {
          if (res.destroyed) return;
          // A client that reads nothing is let go rather than buffered for: it reconnects and reads the list.
          if (res.writableLength > maxBuffered) {
            res.destroy();
            return;
          }
          res.write(`event: ${e.type}\ndata: ${JSON.stringify(e.data)}\n\n`);
        };
        const stop = await ctx.orgStatus.listen({ orgId: principal.org._id, sees, send });
        const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), heartbeatMs);
        if (!res.destroyed) send({ type: 'ready', data: {} });
        try {
          await closed;
        } finally {
          clearInterval(heartbeat);
          stop();
        }
      },
    }),
  ];
}
