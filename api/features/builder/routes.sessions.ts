import { z } from 'zod';

import { BuilderProviderView } from '@shared/ai-providers/schemas';
import { DEFAULT_SESSION_KEY } from '@shared/builder/types';
import type { Principal } from '@shared/identity/service';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { BuilderContext } from './compose';
import {
  CheckpointView,
  CreateSessionRequest,
  FileContentView,
  FileQuery,
  LIMITS_TEXT,
  ListSessionsQuery,
  ProjectSessionParams,
  ProjectSessionRequest,
  RemixRequest,
  RevertRequest,
  SaveFilesRequest,
  SessionIdParams,
  SessionSummaryView,
  SessionView,
  SetModelRequest,
  SetProviderRequest,
  SharedCheckpointView,
  ShareRequest,
  ShareSlugParams,
  ShareView,
} from './schemas';
import type { BuilderService } from './service';
import { checkpointView, headView, messageView, shareView } from './views';

const ACCESS =
  'Builder operations need no named permission: org owners and admins use every project; project admins and developers change sessions of their projects, viewers read them. A session of a project you are not in is 404.';

/** The session as its response shows it: head, recent checkpoints, messages, the running turn and the sandbox. */
export async function sessionBody(builder: BuilderService, p: Principal, id: string) {
  const { session: s, checkpoints, messages, running, sandbox } = await builder.get(p, id);
  return ok({
    id: s._id,
    projectId: s.projectId,
    title: s.title,
    providerId: s.providerId ?? null,
    model: s.model ?? null,
    isDefault: s.defaultKey === DEFAULT_SESSION_KEY,
    remixedFrom: s.remixedFrom ?? null,
    createdAt: s.createdAt.toISOString(),
    head: s.head ? headView(s.head) : null,
    checkpoints: checkpoints.map(checkpointView),
    messages: messages.map(messageView),
    runningTurn: running ? { turnId: running.turnId, startedAt: running.startedAt.toISOString() } : null,
    sandbox,
  });
}

export function builderSessionRoutes(deps: Pick<BuilderContext, 'builder' | 'aiProviders'>): RouteDef[] {
  const { builder } = deps;
  const tags = ['AI builder'];
  const session = { 200: { description: 'The session', schema: success(SessionView) } };
  return [
    route({
      method: 'get',
      path: '/builder/providers',
      summary: 'List the AI providers a session may use (enabled ones; never a key)',
      tags,
      request: {},
      before: [],
      responses: { 200: { description: 'Providers', schema: success(z.array(BuilderProviderView)) } },
      handler: async (_input, req, res) => {
        const list = await deps.aiProviders.list(principalOf(req).org._id, { enabledOnly: true });
        res.json(
          ok(
            list.map((p) => ({
              id: p._id,
              name: p.name,
              kind: p.kind,
              defaultModel: p.defaultModel,
              models: p.models ?? [],
            })),
          ),
        );
      },
    }),
    route({
      method: 'post',
      path: '/builder/sessions',
      summary: 'Create a session in a project',
      description: ACCESS,
      tags,
      request: { body: CreateSessionRequest },
      before: [],
      responses: session,
      handler: async ({ body }, req, res) => {
        const p = principalOf(req);
        res.json(await sessionBody(builder, p, await builder.create(p, body)));
      },
    }),
    route({
      method: 'get',
      path: '/builder/projects/:projectId/sessions',
      summary: "List a project's sessions, newest first (without their files and messages: GET a session for those)",
      description: ACCESS,
      tags,
      request: { params: ProjectSessionParams, query: ListSessionsQuery },
      before: [],
      responses: { 200: { description: 'Sessions', schema: success(z.array(SessionSummaryView)) } },
      handler: async ({ params, query }, req, res) => {
        const list = await builder.list(principalOf(req), params.projectId, query.limit ?? 100);
        res.json(
          ok(
            list.map((s) => ({
              id: s._id,
              projectId: s.projectId,
              title: s.title,
              providerId: s.providerId ?? null,
              model: s.model ?? null,
              isDefault: s.defaultKey === DEFAULT_SESSION_KEY,
              remixedFrom: s.remixedFrom ?? null,
              createdAt: s.createdAt.toISOString(),
            })),
          ),
        );
      },
    }),
    route({
      method: 'get',
      path: '/builder/sessions/:id/files',
      summary: 'Read one file of the session: its content at the head (or at checkpointId)',
      description: `Text comes as it is (encoding utf8); bytes that are not UTF-8 come as base64, as PUT …/files takes them back. A path the head has no file at is 404 FILE_NOT_FOUND. ${ACCESS}`,
      tags,
      request: { params: SessionIdParams, query: FileQuery },
      before: [],
      responses: { 200: { description: 'The file', schema: success(FileContentView) } },
      handler: async ({ params, query }, req, res) => {
        res.json(ok(await builder.readFile(principalOf(req), params.id, query.path, query.checkpointId)));
      },
    }),
    route({
      method: 'get',
      path: '/builder/sessions/:id',
      summary: 'Get a session: its head, recent checkpoints, messages, running turn and sandbox',
      description: ACCESS,
      tags,
      request: { params: SessionIdParams },
      before: [],
      responses: session,
      handler: async ({ params }, req, res) => {
        res.json(await sessionBody(builder, principalOf(req), params.id));
      },
    }),
    route({
      method: 'post',
      path: '/builder/projects/:projectId/session',
      summary: "Get or create the project's default session (one per project, however many ask at once)",
      description: ACCESS,
      tags,
      request: { params: ProjectSessionParams, body: ProjectSessionRequest },
      before: [],
      audit: { resource: 'session', action: 'session.open' },
      responses: session,
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        res.json(await sessionBody(builder, p, await builder.projectSession(p, params.projectId, body.title)));
      },
    }),
    route({
      method: 'put',
      path: '/builder/sessions/:id/files',
      summary: 'Save files: a new checkpoint with these files written or deleted',
      description: `${LIMITS_TEXT} With expectedHead, a session whose head moved meanwhile is 409 and nothing is saved; without it the change is applied to the newest head. Saving files identical to the head makes no checkpoint. ${ACCESS}`,
      tags,
      request: { params: SessionIdParams, body: SaveFilesRequest },
      before: [],
      responses: {
        200: {
          description: 'The head after the save',
          schema: success(z.object({ checkpoint: CheckpointView, created: z.boolean() })),
        },
        409: { description: 'expectedHead is not the head' },
      },
      handler: async ({ params, body }, req, res) => {
        const r = await builder.saveFiles(principalOf(req), params.id, body);
        res.json(ok({ checkpoint: checkpointView(r.checkpoint), created: r.created }));
      },
    }),
    route({
      method: 'post',
      path: '/builder/sessions/:id/revert',
      summary:
        'Revert to a checkpoint: a new checkpoint with its files; later messages are marked reverted, not deleted',
      description: `Every earlier checkpoint stays reachable. A stale expectedHead, or a turn running, is 409. ${ACCESS}`,
      tags,
      request: { params: SessionIdParams, body: RevertRequest },
      before: [],
      responses: {
        200: { description: 'The new head', schema: success(CheckpointView) },
        409: { description: 'expectedHead is not the head, or a turn is running' },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(checkpointView(await builder.revert(principalOf(req), params.id, body))));
      },
    }),
    route({
      method: 'put',
      path: '/builder/sessions/:id/model',
      summary: "Set the session's model (one its provider offers)",
      description: ACCESS,
      tags,
      request: { params: SessionIdParams, body: SetModelRequest },
      before: [],
      responses: session,
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        await builder.setModel(p, params.id, body.model);
        res.json(await sessionBody(builder, p, params.id));
      },
    }),
    route({
      method: 'put',
      path: '/builder/sessions/:id/provider',
      summary: "Set the session's AI provider (and model; its default when absent)",
      description: ACCESS,
      tags,
      request: { params: SessionIdParams, body: SetProviderRequest },
      before: [],
      responses: session,
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        await builder.setProvider(p, params.id, body);
        res.json(await sessionBody(builder, p, params.id));
      },
    }),
    route({
      method: 'post',
      path: '/builder/sessions/:id/share',
      summary: "Share the session's current files: a random slug pinned to the head checkpoint",
      description: `access view lets members of the organisation read the files (GET /builder/shares/{slug}); remix also lets them copy them into a session of their own. ${ACCESS}`,
      tags,
      request: { params: SessionIdParams, body: ShareRequest },
      before: [],
      audit: { idField: 'slug' },
      responses: { 200: { description: 'The share', schema: success(ShareView) } },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(shareView(await builder.share(principalOf(req), params.id, body))));
      },
    }),
    route({
      method: 'get',
      path: '/builder/shares/:slug',
      summary: 'Read a share: the files of the checkpoint it is pinned to (revoked or expired: 404)',
      tags,
      request: { params: ShareSlugParams },
      before: [],
      responses: { 200: { description: 'The shared checkpoint', schema: success(SharedCheckpointView) } },
      handler: async ({ params }, req, res) => {
        const { share, session: s, checkpoint } = await builder.shared(principalOf(req), params.slug);
        res.json(ok({ ...shareView(share), title: s.title, files: headView(checkpoint).files }));
      },
    }),
    route({
      method: 'delete',
      path: '/builder/shares/:slug',
      summary: 'Revoke a share: its slug answers 404 from now on',
      description: ACCESS,
      tags,
      request: { params: ShareSlugParams },
      before: [],
      responses: { 204: { description: 'Revoked' } },
      handler: async ({ params }, req, res) => {
        await builder.revokeShare(principalOf(req), params.slug);
        res.status(204).end();
      },
    }),
    route({
      method: 'post',
      path: '/builder/shares/:slug/remix',
      summary: "Remix a share: a new session in your project with the share's files; the shared session is untouched",
      description: `The share must allow remix; a revoked or expired one is 404. You need to be able to change sessions of projectId. ${ACCESS}`,
      tags,
      request: { params: ShareSlugParams, body: RemixRequest },
      before: [],
      responses: session,
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        res.json(await sessionBody(builder, p, await builder.remix(p, params.slug, body)));
      },
    }),
  ];
}
