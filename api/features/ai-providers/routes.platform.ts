import { z } from 'zod';

import {
  AiProviderIdParams,
  AiProviderTestResult,
  AiProviderView,
  aiProviderView,
  CreateAiProviderRequest,
  UpdateAiProviderRequest,
} from '@shared/ai-providers/schemas';
import { AppError } from '@shared/errors';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { AiProvidersContext } from './compose';

const notFound = (id: string) =>
  new AppError(
    'AI_PROVIDER_NOT_FOUND',
    `No AI provider ${id} in this organisation; list them with GET /ai-providers.`,
    {
      id,
    },
  );

/**
 * The organisation's AI providers: owners and admins add, change, test and remove them; the key goes in
 * and never comes out. Builder users choose among the enabled ones through GET /builder/providers.
 */
export function aiProviderRoutes(deps: Pick<AiProvidersContext, 'aiProviders' | 'aiClient' | 'can'>): RouteDef[] {
  const { aiProviders } = deps;
  const tags = ['AI providers'];
  const manage = [deps.can('ai_provider.manage')];
  const orgOf = (req: Parameters<RouteDef['handler']>[1]) => principalOf(req).org._id;
  return [
    route({
      method: 'post',
      path: '/ai-providers',
      summary: 'Add an AI provider (its API key is stored encrypted and never shown again)',
      tags,
      request: { body: CreateAiProviderRequest },
      before: manage,
      responses: {
        200: { description: 'Added', schema: success(AiProviderView) },
        409: { description: 'A provider of that name already exists in this organisation' },
      },
      handler: async ({ body }, req, res) => {
        res.json(ok(aiProviderView(await aiProviders.create(orgOf(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/ai-providers',
      summary: "List the organisation's AI providers (never their keys)",
      tags,
      request: {},
      before: manage,
      responses: { 200: { description: 'Providers', schema: success(z.array(AiProviderView)) } },
      handler: async (_input, req, res) => {
        res.json(ok((await aiProviders.list(orgOf(req))).map(aiProviderView)));
      },
    }),
    route({
      method: 'get',
      path: '/ai-providers/:id',
      summary: 'Get an AI provider (never its key)',
      tags,
      request: { params: AiProviderIdParams },
      before: manage,
      responses: { 200: { description: 'The provider', schema: success(AiProviderView) } },
      handler: async ({ params }, req, res) => {
        const p = await aiProviders.get(orgOf(req), params.id);
        if (!p) throw notFound(params.id);
        res.json(ok(aiProviderView(p)));
      },
    }),
    route({
      method: 'patch',
      path: '/ai-providers/:id',
      summary: 'Change an AI provider (a new apiKey replaces the stored one)',
      tags,
      request: { params: AiProviderIdParams, body: UpdateAiProviderRequest },
      before: manage,
      responses: {
        200: { description: 'The provider after the change', schema: success(AiProviderView) },
        409: { description: 'A provider of that name already exists in this organisation' },
      },
      handler: async ({ params, body }, req, res) => {
        const p = await aiProviders.update(orgOf(req), params.id, body);
        if (!p) throw notFound(params.id);
        res.json(ok(aiProviderView(p)));
      },
    }),
    route({
      method: 'delete',
      path: '/ai-providers/:id',
      summary: 'Remove an AI provider (sessions that chose it need another before their next message)',
      tags,
      request: { params: AiProviderIdParams },
      before: manage,
      responses: { 204: { description: 'Removed' } },
      handler: async ({ params }, req, res) => {
        if (!(await aiProviders.remove(orgOf(req), params.id))) throw notFound(params.id);
        res.status(204).end();
      },
    }),
    route({
      method: 'post',
      path: '/ai-providers/:id/test',
      summary: "Test an AI provider: a real call to its model list, reporting success or its error's class",
      description:
        'Answers 200 either way: `ok: true` with the model IDs, or `ok: false` with `provider_auth` (the key was refused), `rate_limited`, `provider_unavailable`, `provider_bad_request`, `provider_protocol` or `provider_address_refused`, and what to do.',
      tags,
      request: { params: AiProviderIdParams },
      before: manage,
      responses: { 200: { description: 'The outcome of the call', schema: success(AiProviderTestResult) } },
      handler: async ({ params }, req, res) => {
        const creds = await aiProviders.credentials(orgOf(req), params.id);
        if (!creds) throw notFound(params.id);
        // A provider that goes silent ends as provider_unavailable after AI_IDLE_TIMEOUT_S (the client's own bound).
        res.json(ok(await deps.aiClient.testProvider(creds)));
      },
    }),
  ];
}
