import { z } from 'zod';

import { decodeFiles, INLINE_FILE_LIMITS } from '@shared/uploads/files';

import { withIdempotencyKey } from '../../http/fields';
import { consumeLimit } from '../../mcp/limit';
import { defineTool, type ToolDef, WRITE } from '../../mcp/tool';
import { RedeployRequest } from '../deployments/schemas.commands';
import { PlatformDeployRequest } from '../deployments/schemas.platform';
import { deploymentIdInput, deploymentProjectOf, nextFor, summary, WAIT_S } from '../deployments/tools-common.mcp';
import { commandWaiter, Outcome } from '../deployments/tools-wait.mcp';
import { SETTLED } from '../deployments/wait';
import type { UploadsContext } from './compose';

const L = INLINE_FILE_LIMITS;

const InlineFile = z
  .object({
    path: z.string().min(1).max(1024).meta({ description: 'Relative, /-separated: src/index.js' }),
    content: z.string(),
    encoding: z
      .enum(['utf8', 'base64'])
      .default('utf8')
      .meta({ description: 'utf8 (the default): content is the text; base64: content is the bytes, base64' }),
  })
  .strict();

/** The first deploy's fields, optional and without their defaults here: a release keeps its deployment's own. */
const F = PlatformDeployRequest.shape;
const bare = <T extends z.ZodType>(f: z.ZodDefault<T>) =>
  f
    .removeDefault()
    .optional()
    .meta({ ...f.meta() });

/** Fields that shape a new app, not a release of one. */
const NEW_APP_ONLY = ['name', 'port', 'requestId', 'provider', 'region', 'projectId', 'replicas'] as const;

const Input = z
  .object({
    deploymentId: deploymentIdInput.deploymentId.optional().meta({
      description:
        'Absent: a new app (a deployment creation). The ID an earlier call answered: the files ship as its next release, same ID and URL, no creation spent',
    }),
    files: z
      .array(InlineFile)
      .min(1)
      .max(L.maxFiles, `at most ${L.maxFiles} files inline; zip a larger project and upload it`)
      .meta({
        description: `The whole project, every file (what is not listed is not shipped): at most ${L.maxFiles} files and ${L.maxBytes} bytes of content, paths as in a zip (relative, no .. segment, no backslash, no absolute path); regular files only`,
      }),
    name: F.name.optional(),
    port: bare(F.port),
    envVars: RedeployRequest.shape.envVars.meta({
      description:
        "The app's environment; on a release it replaces the old one, and absent keeps the serving one. Values are never shown again",
    }),
    requestId: F.requestId,
    provider: F.provider,
    region: F.region,
    projectId: F.projectId,
    replicas: bare(F.replicas),
    dockerfilePath: F.dockerfilePath,
    waitS: WAIT_S,
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.deploymentId === undefined && input.name === undefined)
      ctx.addIssue({ code: 'custom', path: ['name'], message: 'a new app needs a name (or give deploymentId)' });
    if (input.deploymentId !== undefined)
      for (const k of NEW_APP_ONLY)
        if (input[k] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: [k],
            message: `${k} applies to a new app; a release keeps its deployment's ${k}`,
          });
  });

const Upload = z.object({
  uploadId: z.uuid(),
  files: z.number().int(),
  bytes: z.number().int().meta({ description: "The zip's size" }),
  sha256: z.string(),
});

/**
 * deploy_files: a project given inline, zipped into an upload of the caller's org and deployed as an uploaded zip is
 * (the same checks, build and limits): a new app, or with deploymentId the next release of one. The loop of an agent
 * that writes code: the first call makes the app, every later one ships the changed files to the same URL.
 */
export function uploadTools(deps: UploadsContext): ToolDef[] {
  const { uploads, deployments } = deps;
  const project = deploymentProjectOf(deps);
  const { settle, outcome } = commandWaiter(deps);

  return [
    defineTool({
      name: 'deploy_files',
      title: 'Deploy files (inline source)',
      description:
        'Ships a small project given as files ({path, content}, text or base64), with no upload step: without ' +
        'deploymentId it deploys a new app (name required; a deployment creation, 10 per 15 minutes per user), with ' +
        'the deploymentId an earlier call answered it builds the files as the next release of that app (same ID and ' +
        'URL, no creation spent; the serving release goes on serving until the new one is ready). The files are ' +
        'the whole app, built as an uploaded zip is: a Dockerfile at the root is used, otherwise the stack is ' +
        'detected (package.json, index.html, requirements.txt). Waits up to waitS seconds, then answers with the ' +
        'status and what to call next.',
      permission: 'deployment.create',
      project: async (p, input) =>
        input.deploymentId === undefined ? input.projectId : project(p, { deploymentId: input.deploymentId }),
      input: Input,
      output: Outcome.partial({ command: true, state: true }).extend({
        created: z.boolean().meta({ description: 'true: a new app; false: a new release of deploymentId' }),
        upload: Upload,
        settled: z.boolean().optional(),
      }),
      annotations: { ...WRITE, idempotentHint: false },
      audit: { resource: 'deployment', id: (input, out) => out?.deploymentId ?? input.deploymentId },
      run: async ({ principal, input, signal }) => {
        const { files, waitS, deploymentId, ...rest } = input;
        // Every refusal of the files (a path, a cap) comes before anything is spent or stored.
        const packed = await uploads.pack(decodeFiles(files), { inline: true });
        const store = async () => {
          const u = await uploads.acceptPacked(principal, packed, 'inline-files.zip');
          return { id: u._id, view: { uploadId: u._id, files: packed.files, bytes: u.size, sha256: u.sha256 } };
        };

        if (deploymentId !== undefined) {
          // The deployment first: an unknown one is refused before anything is stored.
          await deployments.get(principal, deploymentId);
          const upload = await store();
          const accepted = await deployments.redeploy(principal, deploymentId, {
            uploadId: upload.id,
            ...(rest.envVars ? { envVars: rest.envVars } : {}),
            ...(rest.dockerfilePath ? { dockerfilePath: rest.dockerfilePath } : {}),
          });
          await settle(deploymentId, accepted.command.id, waitS, signal);
          return {
            created: false,
            upload: upload.view,
            ...(await outcome(principal, deploymentId, accepted.command.id, 'redeploy')),
          };
        }

        // A replay creates nothing: answered before the creation budget is spent, as the deploy tool does.
        await deployments.refuseReplay(principal, rest.requestId);
        await consumeLimit(deps.limiters.deployCreate, `user:${principal.user._id}`);
        const upload = await store();
        // The first deploy's own schema gives the defaults (port, replicas, provider) a REST deploy would get.
        const { image: _image, ...body } = withIdempotencyKey(
          PlatformDeployRequest.parse({ ...rest, uploadId: upload.id }),
        );
        const record = await deployments.deploySource(principal, body, 'platform');
        const d = waitS
          ? await deps.waitForDeployment(principal, record._id, { until: 'running', timeoutS: waitS })
          : record;
        const next = nextFor(d);
        return {
          deploymentId: d._id,
          created: true,
          upload: upload.view,
          deployment: summary(d),
          settled: SETTLED.includes(d.status),
          ...(next ? { next } : {}),
        };
      },
    }),
  ];
}
