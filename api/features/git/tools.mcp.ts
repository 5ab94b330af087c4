import { z } from 'zod';

import type { Principal } from '@shared/identity/service';
import { ignore } from '@shared/ignore';

import { defineTool, READ, type ToolDef, WRITE } from '../../mcp/tool';
import type { GitContext } from './compose';
import {
  Binding,
  BindingListQuery,
  Connection,
  CreateBindingRequest,
  Delivery,
  NewBinding,
  PageQuery,
} from './schemas';
import { bindingView, connectionView, deliveryView } from './views';

const BindingRef = z.object({ bindingId: z.uuid('a Git binding ID in UUID format') });

/**
 * What a coding agent needs to make pushes ship: the connections it may use, bindings (made and listed), and what
 * each delivery came to. Without PUBLIC_URL the webhook URL is a path on the api's own address.
 */
export function gitTools(deps: Pick<GitContext, 'git' | 'deployments' | 'config'>): ToolDef[] {
  const { git, deployments } = deps;
  const publicUrl = deps.config.PUBLIC_URL ?? `http://localhost:${deps.config.PORT}`;
  const ofBinding = async (p: Principal, input: { bindingId: string }) =>
    (await git.getBinding(p, input.bindingId).catch(ignore('an unknown binding is the handler’s 404', undefined)))
      ?.projectId ?? undefined;
  return [
    defineTool({
      name: 'list_git_connections',
      title: 'List Git connections',
      description:
        'The organisation’s Git hosts and the org secret holding each one’s token (never the token): pass an id as connectionId to create_git_binding for a private repository.',
      permission: 'git.read',
      input: PageQuery,
      output: z.object({ connections: z.array(Connection), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await git.listConnections(principal, input);
        return { connections: items.map(connectionView), total };
      },
    }),
    defineTool({
      name: 'list_git_bindings',
      title: 'List Git bindings',
      description:
        'Repositories’ branches bound to deployments or projects: a push to one ships a new release. Never shows a webhook secret.',
      permission: 'git.read',
      input: BindingListQuery,
      output: z.object({ bindings: z.array(Binding), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await git.listBindings(principal, input);
        return { bindings: items.map((b) => bindingView(b, publicUrl)), total };
      },
    }),
    defineTool({
      name: 'create_git_binding',
      title: 'Bind a repository branch to a deployment',
      description:
        'Each push to branch ships a new release of deploymentId (or of every deployment of projectId built from repoUrl) at the pushed commit. Answers webhookUrl and webhookSecret (shown once): add them as a push webhook on the Git host (GitHub: content type application/json, secret = webhookSecret). connectionId (list_git_connections) reads a private repository.',
      permission: 'git.manage',
      project: async (p, input) =>
        input.projectId ??
        (input.deploymentId
          ? ((
              await deployments
                .get(p, input.deploymentId)
                .catch(ignore('an unknown deployment is the handler’s 404', undefined))
            )?.projectId ?? undefined)
          : undefined),
      input: CreateBindingRequest,
      output: z.object({ binding: NewBinding }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'git-binding', id: (_i, out) => out?.binding.id },
      run: async ({ principal, input }) => {
        const { record, secret } = await git.createBinding(principal, input);
        return { binding: { ...bindingView(record, publicUrl), webhookSecret: secret } };
      },
    }),
    defineTool({
      name: 'list_git_deliveries',
      title: 'List a Git binding’s deliveries',
      description:
        'The binding’s webhook deliveries, newest first: shipped (with each redeploy command), ignored, refused or failed, and why.',
      permission: 'git.read',
      project: ofBinding,
      input: BindingRef.extend(PageQuery.shape),
      output: z.object({ deliveries: z.array(Delivery), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await git.deliveries(principal, input.bindingId, input);
        return { deliveries: items.map(deliveryView), total };
      },
    }),
  ];
}
