import { z } from 'zod';

import { AppError } from '@shared/errors';
import type { TokenRecord } from '@shared/identity/store';
import { PROJECT_ADMIN_ORG_ROLES, roleAllows } from '@shared/permissions';

import { principalOf } from '../../http/auth';
import { budgetOf, limitKey } from '../../http/rate-limit';
import { route, type RouteDef } from '../../http/routes';
import { success } from '../../http/shapes';
import type { FeatureContext } from '../feature';
import { CreateTokenRequest, CurrentToken, DEFAULT_TTL_S, TokenIdParams, TokenSummary } from './schemas';

const view = (t: TokenRecord) => ({
  id: t._id,
  name: t.name,
  scopes: t.scopes,
  expiresAt: t.expiresAt.toISOString(),
  createdAt: t.createdAt.toISOString(),
  lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
  revokedAt: t.revokedAt?.toISOString() ?? null,
});

/** The budgets a token's requests spend, each read under the key it is consumed with (limitKey). */
const BUDGETS = [
  ['platform', 'token'],
  ['deployCreate', 'user'],
  ['domainVerification', 'user'],
  ['compatReads', 'org'],
  ['compatWrites', 'org'],
  ['compatUploads', 'org'],
] as const;

async function budgetsOf(limiters: FeatureContext['limiters'], req: Parameters<typeof principalOf>[0]) {
  const entries = await Promise.all(
    BUDGETS.map(async ([name, per]) => {
      return [name, await budgetOf(limiters[name], limitKey[per](req), per)] as const;
    }),
  );
  return Object.fromEntries(entries);
}

/**
 * A new token's lifetime within the organisation's maximum: one asked for longer is refused, naming the maximum; one
 * that names none gets the default, shortened to the maximum. Tokens already issued keep their expiry.
 */
async function lifetimeOf(
  orgSettings: FeatureContext['orgSettings'],
  orgId: string,
  asked: number | undefined,
): Promise<number> {
  const max = (await orgSettings.of(orgId)).tokenMaxLifetimeS;
  if (max === null) return asked ?? DEFAULT_TTL_S;
  if (asked === undefined) return Math.min(DEFAULT_TTL_S, max);
  if (asked > max)
    throw new AppError(
      'INVALID_REQUEST',
      `expiresIn ${asked} seconds is beyond this organisation's maximum token lifetime of ${max} seconds (${+(max / 86400).toFixed(2)} days); ask for at most that, or an owner or admin may change tokenMaxLifetimeS (PATCH /platform/organization).`,
      { expiresIn: asked, maxSeconds: max },
    );
  return asked;
}

export function tokenRoutes(deps: Pick<FeatureContext, 'identity' | 'can' | 'limiters' | 'orgSettings'>): RouteDef[] {
  const { identity } = deps;
  const tags = ['Access tokens'];
  return [
    route({
      method: 'get',
      path: '/tokens/current',
      summary: 'The calling token: its scopes, user, organisation, effective permissions and remaining budgets',
      description:
        'Any valid token may read itself, so an agent can check what it may do before trying. Needs no permission.',
      tags,
      request: {},
      before: [],
      responses: { 200: { description: 'The calling token', schema: success(CurrentToken) } },
      handler: async (_input, req, res) => {
        const { token, user, org } = principalOf(req);
        res.json({
          status: 'success',
          data: {
            id: token._id,
            name: token.name,
            scopes: token.scopes,
            expiresAt: token.expiresAt.toISOString(),
            user: { id: user._id, email: user.email, role: user.role },
            org: { id: org._id, name: org.name, plan: org.plan },
            permissions: token.scopes.filter((s) => roleAllows(user.role, s)),
            actsAsProjectAdmin: PROJECT_ADMIN_ORG_ROLES.includes(user.role),
            limits: await budgetsOf(deps.limiters, req),
          },
        });
      },
    }),
    route({
      method: 'post',
      path: '/tokens',
      summary: 'Create an access token for yourself; the secret is shown once',
      description:
        "A token may carry only scopes your role grants and the calling token holds, and live no longer than the organisation's tokenMaxLifetimeS (400 naming it).",
      tags,
      request: { body: CreateTokenRequest },
      before: [deps.can('token.manage')],
      responses: {
        400: { description: "INVALID_REQUEST: expiresIn beyond the organisation's maximum token lifetime" },
        200: {
          description: 'The new token',
          schema: success(
            TokenSummary.extend({ token: z.string().meta({ description: 'The secret; shown only here' }) }),
          ),
        },
      },
      handler: async ({ body }, req, res) => {
        const p = principalOf(req);
        const beyond = body.scopes.filter((s) => !roleAllows(p.user.role, s) || !p.token.scopes.includes(s));
        if (beyond.length) {
          throw new AppError(
            'INSUFFICIENT_SCOPE',
            `You cannot grant ${beyond.join(', ')}: your role or this token does not hold it.`,
            {
              scopes: beyond,
            },
          );
        }
        const t = await identity.createToken({
          orgId: p.org._id,
          userId: p.user._id,
          name: body.name,
          scopes: body.scopes,
          expiresInS: await lifetimeOf(deps.orgSettings, p.org._id, body.expiresIn),
        });
        const record = await identity.getToken(p.org._id, t.id);
        res.json({ status: 'success', data: { ...view(record!), token: t.token } });
      },
    }),
    route({
      method: 'get',
      path: '/tokens',
      summary: 'List your access tokens (never their secrets)',
      tags,
      request: {},
      before: [deps.can('token.manage')],
      responses: { 200: { description: 'Tokens', schema: success(TokenSummary.array()) } },
      handler: async (_input, req, res) => {
        const p = principalOf(req);
        res.json({ status: 'success', data: (await identity.listTokens(p.org._id, p.user._id)).map(view) });
      },
    }),
    route({
      method: 'delete',
      path: '/tokens/:id',
      summary: 'Revoke one of your access tokens, at once',
      tags,
      request: { params: TokenIdParams },
      before: [deps.can('token.manage')],
      responses: { 204: { description: 'Revoked' } },
      handler: async ({ params }, req, res) => {
        const p = principalOf(req);
        const owners = p.user.role === 'owner' || p.user.role === 'admin';
        const t = await identity.getToken(p.org._id, params.id);
        if (!t || t.revokedAt || (!owners && t.userId !== p.user._id)) {
          throw new AppError('TOKEN_NOT_FOUND', `No active token ${params.id} of yours.`);
        }
        await identity.revokeToken(params.id, p.org._id);
        res.status(204).end();
      },
    }),
  ];
}
