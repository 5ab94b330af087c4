import type { UserRecord } from '@shared/identity/store';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { UsersContext } from './compose';
import { CreateUserRequest, UpdateUserRequest, User, UserIdParams } from './schemas';

const userView = (u: UserRecord) => ({
  id: u._id,
  email: u.email,
  ...(u.name ? { name: u.name } : {}),
  role: u.role,
  createdAt: u.createdAt.toISOString(),
});

/** The organisation's users, for its owners and admins (user.manage). */
export function userRoutes(ctx: Pick<UsersContext, 'users' | 'can'>): RouteDef[] {
  const { users, can } = ctx;
  const tags = ['Users'];
  return [
    route({
      method: 'get',
      path: '/users',
      summary: "The organisation's users and their org roles",
      tags,
      request: {},
      before: [can('user.manage')],
      responses: { 200: { description: 'Users, by e-mail', schema: success(User.array()) } },
      handler: async (_input, req, res) => {
        res.json(ok((await users.list(principalOf(req))).map(userView)));
      },
    }),
    route({
      method: 'post',
      path: '/users',
      summary: 'Add a user to the organisation with an org role (only an owner can add an owner)',
      description: 'The user then gets access tokens from an operator (slipway admin token create).',
      tags,
      request: { body: CreateUserRequest },
      before: [can('user.manage')],
      responses: {
        200: { description: 'The user', schema: success(User) },
        409: { description: 'CONFLICT: a user with that e-mail exists in the organisation' },
      },
      handler: async ({ body }, req, res) => {
        res.json(ok(userView(await users.add(principalOf(req), body))));
      },
    }),
    route({
      method: 'patch',
      path: '/users/:id',
      summary: "Change a user's org role; the last owner cannot be demoted",
      tags,
      request: { params: UserIdParams, body: UpdateUserRequest },
      before: [can('user.manage')],
      responses: {
        200: { description: 'The user', schema: success(User) },
        400: { description: 'The user is the last owner of the organisation' },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(userView(await users.setRole(principalOf(req), params.id, body.role))));
      },
    }),
  ];
}
