import { z } from 'zod';

import { SANDBOX_RUNTIMES, SANDBOX_STATUSES, SYNC_ACTIONS } from '@shared/builder/sandbox-store';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { BuilderContext } from './compose';
import { SessionIdParams } from './schemas';

/** Names the sandbox sets itself: PORT is the configured port, SLIPWAY_* drive its supervisor. */
const RESERVED_ENV = /^(PORT|SLIPWAY_.*)$/;
const MAX_ENV = 50;
/** The names a sandbox takes, reserved ones left out: the document's propertyNames. */
const ENV_NAME = '^(?!PORT$|SLIPWAY_)[A-Za-z_][A-Za-z0-9_]{0,127}$';

export const SandboxRequest = z
  .object({
    runtime: z
      .enum(SANDBOX_RUNTIMES)
      .meta({ description: 'Base image: node (Node.js, npm), static (busybox httpd), python (3, pip)' }),
    startCommand: z
      .string()
      .min(1)
      .max(1000)
      // eslint-disable-next-line no-control-regex
      .regex(/^[^\u0000-\u001f\u007f]+$/, 'one line without control characters')
      .optional()
      .meta({
        description:
          'Run by sh -c in the app directory, listening on $PORT. Default: node `npm start` (or node server.js / index.js), python `python3 app.py`, static busybox httpd',
      }),
    port: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .optional()
      .meta({ description: 'Default: node 3000, static 8080, python 8000' }),
    env: z
      .record(
        z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name'),
        z
          .string()
          .max(4096)
          // eslint-disable-next-line no-control-regex
          .regex(/^[^\x00]*$/, 'no NUL character'),
      )
      .refine((e) => Object.keys(e).length <= MAX_ENV, `at most ${MAX_ENV} variables`)
      .refine((e) => !Object.keys(e).some((k) => RESERVED_ENV.test(k)), 'PORT and SLIPWAY_* are set by the sandbox')
      .optional()
      .meta({ maxProperties: MAX_ENV, propertyNames: { type: 'string', pattern: ENV_NAME } }),
  })
  .strict()
  .meta({ id: 'BuilderSandboxRequest' });

export const SandboxView = z
  .object({
    runtime: z.enum(SANDBOX_RUNTIMES),
    startCommand: z.string().nullable(),
    port: z.number().int(),
    envNames: z.array(z.string()),
    status: z.enum(SANDBOX_STATUSES),
    previewUrl: z
      .string()
      .meta({ description: 'Stable for the session: the edge router routes it to the current container' }),
    appliedCheckpointId: z.uuid().nullable().meta({ description: 'The checkpoint the preview shows' }),
    headCheckpointId: z.uuid().nullable(),
    inSync: z.boolean().meta({ description: 'The preview runs and shows the head with the current configuration' }),
    lastSyncAt: z.iso.datetime().nullable(),
    lastAction: z.enum(SYNC_ACTIONS).nullable(),
    containerId: z.string().nullable(),
    error: z.string().nullable().meta({ description: 'Why the last sync failed (install, start, probe)' }),
  })
  .meta({ id: 'BuilderSandbox' });

const SyncView = z
  .object({
    status: z.enum(['running', 'failed']),
    action: z.enum(SYNC_ACTIONS).meta({
      description:
        'none; copy (changed files copied, served as they are); restart (copied, app restarted); reinstall (the dependency manifest changed); recreate (a new container with every file)',
    }),
    appliedCheckpointId: z.uuid().nullable(),
    copied: z.number().int(),
    deleted: z.number().int(),
    containerId: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'BuilderSandboxSync' });

const SyncProgress = z
  .object({
    id: z.uuid().meta({ description: 'The sync: GET url follows it' }),
    state: z.enum(['running', 'ended']),
    url: z.string().meta({ description: 'Where to follow the sync: GET it until state is ended' }),
    sync: SyncView.nullable().meta({ description: 'What the sync did, once it has ended (null while it runs)' }),
    sandbox: SandboxView,
  })
  .meta({ id: 'BuilderSandboxSyncProgress' });

const SyncParams = SessionIdParams.extend({ syncId: z.uuid('a sync ID as POST …/sandbox/sync returned it') });

const ACCESS =
  'Project admins and developers (and org owners and admins); a session of a project you are not in is 404.';
const READ_ACCESS =
  'Any member of the project (and org owners and admins); a session of a project you are not in is 404.';

/** The sync's own URL, under the origin the request came through. */
const withUrl = <T extends { id: string }>(r: T, base: string, sessionId: string) => ({
  ...r,
  url: `${base}/builder/sessions/${sessionId}/sandbox/syncs/${r.id}`,
});

export function builderSandboxRoutes(ctx: Pick<BuilderContext, 'builderSandbox'>): RouteDef[] {
  const sandbox = ctx.builderSandbox;
  const tags = ['AI builder'];
  return [
    route({
      method: 'put',
      path: '/builder/sessions/:id/sandbox',
      summary: "Configure the session's live preview (a container from the local base images behind a stable URL)",
      description: `Stores the configuration; POST …/sandbox/sync starts (or updates) the preview. A new configuration is applied by the next sync in a new container. ${ACCESS}`,
      tags,
      request: { params: SessionIdParams, body: SandboxRequest },
      before: [],
      responses: { 200: { description: 'The sandbox', schema: success(SandboxView) } },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(await sandbox.configure(principalOf(req), params.id, body)));
      },
    }),
    route({
      method: 'post',
      path: '/builder/sessions/:id/sandbox/sync',
      summary: "Show the session's head in its preview: 200 when the sync has ended, 202 with its URL to follow",
      description: `The session's workflow sandbox/{id} copies only the changed files into the running container, reinstalls when package.json or requirements.txt changed, restarts the app (a static site needs no restart), probes the preview and records what it applied. A crashed or idle-stopped container is made anew with every file. The answer comes within SANDBOX_SYNC_WAIT_S (5 s): 200 with what the sync did when it has ended, else 202 with state running and url, which GET follows (each read waits the same few seconds). inSync says whether the preview shows the head now. ${ACCESS}`,
      tags,
      request: { params: SessionIdParams, body: z.object({}).strict().optional() },
      before: [],
      responses: {
        200: {
          description: 'The sync has ended: what it did, and the sandbox after it',
          schema: success(SyncProgress),
        },
        202: { description: 'The sync is still running: follow url', schema: success(SyncProgress) },
      },
      handler: async ({ params }, req, res) => {
        const r = await sandbox.sync(principalOf(req), params.id);
        res.status(r.state === 'ended' ? 200 : 202).json(ok(withUrl(r, req.baseUrl, params.id)));
      },
    }),
    route({
      method: 'get',
      path: '/builder/sessions/:id/sandbox/syncs/:syncId',
      summary: 'Follow a sandbox sync: running, or ended with what it did',
      description: `Waits up to SANDBOX_SYNC_WAIT_S (5 s) for the sync to end before answering state running. ${READ_ACCESS}`,
      tags,
      request: { params: SyncParams },
      before: [],
      responses: { 200: { description: 'The sync, and the sandbox now', schema: success(SyncProgress) } },
      handler: async ({ params }, req, res) => {
        const r = await sandbox.follow(principalOf(req), params.id, params.syncId);
        res.json(ok(withUrl(r, req.baseUrl, params.id)));
      },
    }),
  ];
}
