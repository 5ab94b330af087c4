import { z } from 'zod';

import type { Principal } from '@shared/identity/service';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { PlatformDeployment } from '../deployments/schemas.platform';
import { platformDeploymentView } from '../deployments/views';
import type { BuilderContext } from './compose';
import type { Published } from './publish';
import { SessionIdParams } from './schemas';

export const PublishRequest = z
  .object({
    deploymentId: z.uuid('a deployment ID in UUID format').optional().meta({
      description:
        "A deployment of the session's project to publish to, when the session has none yet (or its own was destroyed); the session publishes there from then on. Absent: its own, or a new one on the first publish",
    }),
  })
  .strict()
  .meta({ id: 'PublishBuilderSessionRequest' });

export const PublishAccepted = z
  .object({
    sessionId: z.uuid(),
    checkpointId: z.uuid().meta({ description: 'The checkpoint published: the head when the request came' }),
    deploymentId: z.uuid(),
    url: z.string().nullable().meta({ description: 'Where the deployment answers, the same for every publish' }),
    created: z.boolean().meta({ description: 'true: the first publish made the deployment (a deployment creation)' }),
    uploadId: z
      .uuid()
      .nullable()
      .meta({ description: "The zip of the checkpoint's files; null when its first deploy is still on its way" }),
    deployment: PlatformDeployment,
    statusUrl: z.string().meta({ description: 'GET it (with ?wait=running) to follow the deployment' }),
    command: z
      .object({ id: z.string(), name: z.literal('redeploy'), url: z.string() })
      .nullable()
      .meta({ description: 'A new release: GET url to see it run, succeed or fail; null on a creation' }),
  })
  .meta({ id: 'BuilderPublishAccepted' });

export const PUBLISH_TEXT =
  "Publishes the head checkpoint's files, exactly, as a deployment: zipped into an upload of the organisation and built as an uploaded zip is (a root Dockerfile, else the detected stack; the app listens on $PORT, 8080). " +
  'The first publish creates the deployment in the session’s project (one deployment creation, 10 per 15 minutes per user); every later one ships a new release of it at the same URL, built beside the serving release, which keeps serving if the new one fails. ' +
  'Two publishes at once make one deployment. Needs the builder’s write access and deployment.create in the project.';

/** A publish as both origins answer it: the deployment, where it answers, and what to follow. */
export function publishedView(
  r: Published,
  platformBase: string,
  engineRegion: string,
): z.infer<typeof PublishAccepted> {
  const statusUrl = `${platformBase}/deployments/${r.deployment._id}`;
  return {
    sessionId: r.session._id,
    checkpointId: r.checkpoint._id,
    deploymentId: r.deployment._id,
    url: r.url,
    created: r.created,
    uploadId: r.uploadId,
    deployment: platformDeploymentView(r.deployment, engineRegion),
    statusUrl,
    command: r.command
      ? { id: r.command.id, name: 'redeploy', url: `${statusUrl}/commands/${encodeURIComponent(r.command.id)}` }
      : null,
  };
}

export function builderPublishRoutes(ctx: Pick<BuilderContext, 'builderPublish' | 'config'>): RouteDef[] {
  const publish = (p: Principal, id: string, body: z.infer<typeof PublishRequest>) =>
    ctx.builderPublish.publish(p, id, body);
  return [
    route({
      method: 'post',
      path: '/builder/sessions/:id/publish',
      summary: 'Publish the head checkpoint as a deployment: the first time a new one, then a new release of it',
      description: PUBLISH_TEXT,
      tags: ['AI builder'],
      request: { params: SessionIdParams, body: PublishRequest },
      before: [],
      responses: {
        202: {
          description: 'Accepted: follow statusUrl, or command.url for a new release',
          schema: success(PublishAccepted),
        },
        404: { description: 'No such session in this organisation, or one of a project you are not in' },
        409: { description: 'deploymentId names another deployment than the one this session publishes to' },
      },
      handler: async ({ params, body }, req, res) => {
        res
          .status(202)
          .json(
            ok(publishedView(await publish(principalOf(req), params.id, body), req.baseUrl, ctx.config.ENGINE_REGION)),
          );
      },
    }),
  ];
}
