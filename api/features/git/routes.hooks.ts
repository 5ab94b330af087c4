import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { GitContext } from './compose';
import { HookAnswer, HookHeaders, HookParams, PushPayload } from './schemas';

/**
 * The hooks origin's one route: a Git host's webhook delivery for a binding. No token: the delivery is authenticated by
 * the binding's webhook secret (a signature over the raw body, or GitLab's token), so the body is read raw and parsed
 * only once verified.
 */
export function gitHookRoutes(ctx: Pick<GitContext, 'gitHooks'>): RouteDef[] {
  return [
    route({
      method: 'post',
      path: '/git/:bindingId',
      summary: 'A Git host’s push event for a binding: verified by its signature, then shipped as a new release',
      description:
        'Unauthenticated by token; authenticated by the binding’s webhook secret in one of four schemes, read from the headers (or the binding’s connection’s provider): GitHub (X-Hub-Signature-256, X-GitHub-Event, X-GitHub-Delivery), GitLab (X-Gitlab-Token, X-Gitlab-Event: Push Hook, X-Gitlab-Event-UUID or Idempotency-Key), Gitea (X-Gitea-Signature, X-Gitea-Event, X-Gitea-Delivery) or generic (X-Slipway-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">, X-Slipway-Timestamp within 5 minutes, X-Slipway-Delivery). A push whose ref is refs/heads/<the bound branch> ships the commit in after (GitLab: checkout_sha) as a redeploy (202); pings, other branches and deletions are 200 and ship nothing; a delivery ID seen before is 200 "duplicate". Bodies over 1 MiB are refused (413). Rate limited per client address.',
      tags: ['Git'],
      request: { params: HookParams, headers: HookHeaders },
      rawBody: { schema: PushPayload, description: 'The provider’s push event payload, exactly as it sent it' },
      before: [],
      responses: {
        200: {
          description: 'Accepted and ignored (ping, another branch, a deletion), or a duplicate',
          schema: success(HookAnswer),
        },
        202: { description: 'Shipped: a redeploy was asked for each target (releases)', schema: success(HookAnswer) },
        400: {
          description:
            'INVALID_REQUEST: no delivery ID, a malformed payload, or the redeploy was refused (listed as failed)',
        },
        401: { description: 'SIGNATURE_INVALID: unsigned, or not signed with the binding’s secret (nothing starts)' },
        404: { description: 'GIT_BINDING_NOT_FOUND: no such binding (check the webhook URL)' },
        413: { description: 'PAYLOAD_TOO_LARGE: the body is over 1 MiB' },
        429: { description: 'RATE_LIMIT_EXCEEDED: too many deliveries from this address' },
      },
      handler: async ({ params }, req, res) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const { status, ...answer } = await ctx.gitHooks.receive(params.bindingId, req.headers, raw, String(req.id));
        res.status(status).json(ok(answer));
      },
    }),
  ];
}
