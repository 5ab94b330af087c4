import { z } from 'zod';

import { principalOf } from '../../http/auth';
import { text } from '../../http/fields';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { BuilderContext } from './compose';
import { sessionBody } from './routes.sessions';
import { SessionIdParams, SessionView } from './schemas';

const repoUrl = z
  .url({ protocol: /^https?$/, error: 'an https:// repository URL (http:// only where private Git hosts are allowed)' })
  .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), {
    message: 'the URL must not carry credentials: store the token with POST /platform/secrets and pass tokenSecretId',
  });
const branch = z
  .string()
  .min(1)
  .max(255)
  // eslint-disable-next-line no-control-regex
  .regex(/^(?!-)(?!.*\.\.)(?!.*\/\/)[^\s~^:?*[\\\x00-\x1f\x7f]+(?<![./])$/, 'a Git branch name');
const tokenSecretId = z.string().min(1).max(64).optional().meta({
  description:
    "Vault secret holding the Git token; needs the secret.use permission, an https:// URL on a host in the secret's allowedHosts, and a PRODUCTION secret",
});

export const GitPushRequest = z
  .object({
    remoteUrl: repoUrl.optional().meta({ description: "Default: the session's bound remote (import or last push)" }),
    branch,
    message: text(2000),
    tokenSecretId,
    force: z.boolean().optional().meta({
      description:
        "Push even when the branch has commits this session did not make: the session's files become a new commit on top of them",
    }),
  })
  .strict()
  .meta({ id: 'BuilderGitPushRequest' });

export const GitImportRequest = z
  .object({
    repoUrl,
    branch: branch.optional().meta({ description: "Default: the repository's default branch" }),
    projectId: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_-]+$/, 'a project ID'),
    tokenSecretId,
    title: text(120).optional(),
  })
  .strict()
  .meta({ id: 'BuilderGitImportRequest' });

const GitStatusView = z
  .object({
    remoteUrl: z.string().nullable(),
    branch: z.string().nullable(),
    lastCommit: z.string().nullable().meta({ description: 'The commit last imported from or pushed to the remote' }),
    lastCommitCheckpointId: z.uuid().nullable(),
    via: z.enum(['import', 'push']).nullable(),
    at: z.iso.datetime().nullable(),
    headCheckpointId: z.uuid().nullable(),
    headDiffers: z.boolean().meta({ description: 'The head has changes the remote does not have' }),
  })
  .meta({ id: 'BuilderGitStatus' });

const PushView = z
  .object({
    commit: z.string(),
    pushed: z.boolean().meta({ description: 'false: the branch already held exactly these files' }),
    checkpointId: z.uuid(),
    remoteUrl: z.string(),
    branch: z.string(),
  })
  .meta({ id: 'BuilderGitPush' });

const RULES =
  "Git runs in the worker with the source deploys' rules: hosts on loopback, private or link-local addresses are refused (unless ALLOW_PRIVATE_GIT_HOSTS), the address is pinned, redirects are not followed, and clones are held to GIT_MAX_BYTES and GIT_CLONE_TIMEOUT_S.";

export function builderGitRoutes(ctx: Pick<BuilderContext, 'builder' | 'builderGit'>): RouteDef[] {
  const git = ctx.builderGit;
  const tags = ['AI builder'];
  return [
    route({
      method: 'get',
      path: '/builder/sessions/:id/git',
      summary:
        "The session's Git binding: remote, branch, last pushed or imported commit, and whether the head differs",
      tags,
      request: { params: SessionIdParams },
      before: [],
      responses: { 200: { description: 'The binding', schema: success(GitStatusView) } },
      handler: async ({ params }, req, res) => {
        res.json(ok(await git.status(principalOf(req), params.id)));
      },
    }),
    route({
      method: 'post',
      path: '/builder/sessions/:id/git/push',
      summary: "Commit the head's files and push them to a branch",
      description: `The commit goes on top of the branch when the branch is where this session left it (or does not exist yet); a branch with commits this session did not make is 409 unless force. ${RULES}`,
      tags,
      request: { params: SessionIdParams, body: GitPushRequest },
      before: [],
      responses: {
        200: { description: 'The push', schema: success(PushView) },
        409: { description: 'The branch has commits this session did not make, or a push is running' },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(await git.push(principalOf(req), params.id, body)));
      },
    }),
    route({
      method: 'post',
      path: '/builder/import/git',
      summary: "Import a repository: a new session in the project whose first checkpoint is the repository's files",
      description: `Regular files only (symlinks are left out), held to the session caps. ${RULES}`,
      tags,
      request: { body: GitImportRequest },
      before: [],
      audit: { resource: 'session', action: 'session.import' },
      responses: { 200: { description: 'The new session', schema: success(SessionView) } },
      handler: async ({ body }, req, res) => {
        const p = principalOf(req);
        res.json(await sessionBody(ctx.builder, p, await git.importRepo(p, body)));
      },
    }),
  ];
}
