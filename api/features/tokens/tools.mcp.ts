import { z } from 'zod';

import { ORG_ROLES, PERMISSIONS, PROJECT_ADMIN_ORG_ROLES, roleAllows } from '@shared/permissions';

import { budgetOf } from '../../http/rate-limit';
import { defineTool, READ, type ToolDef } from '../../mcp/tool';
import type { FeatureContext } from '../feature';

/** The budgets an MCP caller spends, each under the key it is consumed with (api/mcp/server.ts, the deploy tool). */
const BUDGETS = [
  ['mcp', 'token'],
  ['deployCreate', 'user'],
  ['domainVerification', 'user'],
] as const;

const Budget = z.object({
  limit: z.number().int(),
  remaining: z.number().int(),
  windowSeconds: z.number().int(),
  per: z.enum(['token', 'user']),
  resetAt: z.iso.datetime().nullable(),
});

export function tokenTools(deps: Pick<FeatureContext, 'limiters'>): ToolDef[] {
  return [
    defineTool({
      name: 'whoami',
      title: 'Who am I',
      description:
        'Your organisation, user and role, this token’s scopes and effective permissions, and the rate budgets left ' +
        '(MCP calls per token, deployments created per user). Call it first; it needs no permission.',
      permission: null,
      input: z.object({}),
      output: z.object({
        org: z.object({ id: z.string(), name: z.string(), plan: z.string() }),
        user: z.object({ id: z.string(), email: z.string(), role: z.enum(ORG_ROLES) }),
        token: z.object({ id: z.string(), name: z.string(), expiresAt: z.iso.datetime() }),
        scopes: z.array(z.string()),
        permissions: z.array(z.enum(PERMISSIONS)),
        actsAsProjectAdmin: z.boolean(),
        budgets: z.record(z.string(), Budget),
      }),
      annotations: READ,
      run: async ({ principal: { org, user, token } }) => {
        const keys = { token: `token:${token._id}`, user: `user:${user._id}` };
        const budgets = Object.fromEntries(
          await Promise.all(
            BUDGETS.map(async ([name, per]) => [name, await budgetOf(deps.limiters[name], keys[per], per)] as const),
          ),
        );
        return {
          org: { id: org._id, name: org.name, plan: org.plan },
          user: { id: user._id, email: user.email, role: user.role },
          token: { id: token._id, name: token.name, expiresAt: token.expiresAt.toISOString() },
          scopes: token.scopes,
          permissions: token.scopes.filter((s) => roleAllows(user.role, s)),
          actsAsProjectAdmin: PROJECT_ADMIN_ORG_ROLES.includes(user.role),
          budgets,
        };
      },
    }),
  ];
}
