import type { Request } from 'express';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { bindingProject, newBindingProject } from './access';
import type { GitContext } from './compose';
import {
  Binding,
  BindingIdParams,
  BindingList,
  BindingListQuery,
  Connection,
  ConnectionIdParams,
  ConnectionList,
  CreateBindingRequest,
  CreateConnectionRequest,
  DeliveryList,
  NewBinding,
  PageQuery,
} from './schemas';
import { bindingView, connectionView, deliveryView } from './views';

/**
 * `/git/connections…`: Git hosts and the org secret holding each one's token; `/git/bindings…`: a repository's branch
 * bound to a deployment (or a project), whose pushes, posted to the binding's webhook URL on the hooks origin, ship
 * new releases.
 */
export function gitRoutes(ctx: Pick<GitContext, 'git' | 'deployments' | 'can' | 'config'>): RouteDef[] {
  const { git, can } = ctx;
  const tags = ['Git'];
  const ofBinding = bindingProject(git);
  const publicUrl = (req: Request) => ctx.config.PUBLIC_URL ?? `${req.protocol}://${req.get('host')}`;
  return [
    route({
      method: 'post',
      path: '/git/connections',
      summary: 'Add a Git host and the org secret holding its token (never the token itself)',
      description:
        'provider decides the default baseUrl (https://github.com, https://gitlab.com, https://gitea.com; generic needs one) and the webhook scheme its bindings expect. The token stays in the vault: tokenSecretId must be an org secret bound to the host (allowedHosts), in any vault environment (its own is used for every redeploy through the connection), and naming it needs secret.use. The plan bounds connections (429).',
      tags,
      request: { body: CreateConnectionRequest },
      before: [can('git.manage')],
      audit: { resource: 'git-connection' },
      responses: {
        201: { description: 'The connection', schema: success(Connection) },
        400: {
          description:
            'INVALID_REQUEST: a baseUrl that is not https or is private, or a secret not this organisation’s or not bound to the host',
        },
        429: { description: 'QUOTA_EXCEEDED: the plan’s Git connections' },
      },
      handler: async ({ body }, req, res) => {
        res.status(201).json(ok(connectionView(await git.createConnection(principalOf(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/git/connections',
      summary: 'List the organisation’s Git connections, oldest first',
      tags,
      request: { query: PageQuery },
      before: [can('git.read')],
      responses: { 200: { description: 'A page of connections', schema: success(ConnectionList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await git.listConnections(principalOf(req), query);
        res.json(ok({ connections: items.map(connectionView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'delete',
      path: '/git/connections/:id',
      summary: 'Delete a Git connection; refused (409) while bindings use it',
      tags,
      request: { params: ConnectionIdParams },
      before: [can('git.manage')],
      audit: { resource: 'git-connection' },
      responses: {
        200: { description: 'Deleted', schema: success(Connection) },
        404: { description: 'GIT_CONNECTION_NOT_FOUND' },
        409: { description: 'GIT_CONNECTION_IN_USE: delete its bindings first' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(connectionView(await git.removeConnection(principalOf(req), params.id))));
      },
    }),
    route({
      method: 'post',
      path: '/git/bindings',
      summary: 'Bind a repository’s branch to a deployment or a project: each push to it ships a new release',
      description:
        'The answer holds the webhook URL (POST, on the hooks origin: /hooks/git/{id}) and the webhook secret, shown this once: add both to the Git host’s webhook settings (README, "Git bindings"). With deploymentId, each push to the branch is a redeploy of that deployment at the pushed commit; with projectId, of every deployment of the project built from repoUrl. repoUrl is held to a source deploy’s Git rules; with connectionId, its token reads a private repository (secret.use) and its provider’s scheme signs deliveries. Needs deployment.create where the target is. The plan bounds bindings (429).',
      tags,
      request: { body: CreateBindingRequest },
      before: [can('git.manage', newBindingProject(ctx.deployments))],
      audit: { resource: 'git-binding' },
      responses: {
        201: { description: 'The binding, with its webhook secret', schema: success(NewBinding) },
        400: { description: 'INVALID_REQUEST: repoUrl refused by the Git rules, or not on the connection’s host' },
        404: { description: 'DEPLOYMENT_NOT_FOUND, PROJECT_NOT_FOUND or GIT_CONNECTION_NOT_FOUND' },
        429: { description: 'QUOTA_EXCEEDED: the plan’s Git bindings' },
      },
      handler: async ({ body }, req, res) => {
        const { record, secret } = await git.createBinding(principalOf(req), body);
        res.status(201).json(ok({ ...bindingView(record, publicUrl(req)), webhookSecret: secret }));
      },
    }),
    route({
      method: 'get',
      path: '/git/bindings',
      summary: 'List Git bindings: the organisation’s and those of the projects you can see',
      tags,
      request: { query: BindingListQuery },
      before: [can('git.read')],
      responses: { 200: { description: 'A page of bindings', schema: success(BindingList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await git.listBindings(principalOf(req), query);
        res.json(
          ok({
            bindings: items.map((b) => bindingView(b, publicUrl(req))),
            total,
            limit: query.limit,
            offset: query.offset,
          }),
        );
      },
    }),
    route({
      method: 'get',
      path: '/git/bindings/:id',
      summary: 'A Git binding (never its webhook secret)',
      tags,
      request: { params: BindingIdParams },
      before: [can('git.read', ofBinding)],
      responses: {
        200: { description: 'The binding', schema: success(Binding) },
        404: { description: 'GIT_BINDING_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(bindingView(await git.getBinding(principalOf(req), params.id), publicUrl(req))));
      },
    }),
    route({
      method: 'delete',
      path: '/git/bindings/:id',
      summary: 'Delete a Git binding and its deliveries: its webhook URL answers 404 from now on',
      tags,
      request: { params: BindingIdParams },
      before: [can('git.manage', ofBinding)],
      audit: { resource: 'git-binding' },
      responses: {
        200: { description: 'Deleted', schema: success(Binding) },
        404: { description: 'GIT_BINDING_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(bindingView(await git.removeBinding(principalOf(req), params.id), publicUrl(req))));
      },
    }),
    route({
      method: 'get',
      path: '/git/bindings/:id/deliveries',
      summary: 'The binding’s webhook deliveries, newest first, each with its outcome',
      description:
        'shipped (releases names each deployment and the redeploy command to follow), ignored (another branch, a ping, a deletion, no deployment to ship to), refused (unsigned or wrongly signed: at most 20 an hour are listed) or failed (reason). A replay of a delivery ID is answered "duplicate" and not listed again.',
      tags,
      request: { params: BindingIdParams, query: PageQuery },
      before: [can('git.read', ofBinding)],
      responses: {
        200: { description: 'A page of deliveries', schema: success(DeliveryList) },
        404: { description: 'GIT_BINDING_NOT_FOUND' },
      },
      handler: async ({ params, query }, req, res) => {
        const { items, total } = await git.deliveries(principalOf(req), params.id, query);
        res.json(ok({ deliveries: items.map(deliveryView), total, limit: query.limit, offset: query.offset }));
      },
    }),
  ];
}
