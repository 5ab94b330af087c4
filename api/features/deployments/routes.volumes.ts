import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { deploymentProject } from './access';
import type { DeploymentsContext } from './compose';
import { DeploymentIdParams } from './schemas';
import { VolumeChangeAccepted } from './schemas.commands';
import { DeploymentVolumeList, VolumeAttachParams, VolumeMountRequest } from './schemas.volumes';
import { platformDeploymentView } from './views';

const CHANGE =
  'Answered like the other commands (202 with the command to follow): the change ships as a new release of the serving image and environment with the new set of volumes, started beside the serving one; if it fails, the serving release goes on as it was.';

const REFUSED =
  'CONFLICT: the volume is attached to another deployment (named), the mountPath is taken, the deployment runs more than one instance (scale to 1 first), the volume is not ready, or the deployment is busy with a release (wait)';

/**
 * A deployment's volumes: attached and detached, each change a new release (service.volumes.ts). A volume has one
 * writer: it is attached to one deployment, which runs one instance while it mounts any.
 */
export function volumeAttachmentRoutes(ctx: DeploymentsContext): RouteDef[] {
  const { deployments, can } = ctx;
  const tags = ['Deployments', 'Volumes'];
  const itsProject = deploymentProject(deployments);
  const accepted = (a: Awaited<ReturnType<typeof deployments.attachVolume>>, volumeId: string, base: string) => {
    const statusUrl = `${base}/deployments/${a.deployment._id}`;
    return ok({
      deployment: platformDeploymentView(a.deployment, ctx.config.ENGINE_REGION, undefined, a.volumes),
      statusUrl,
      command: { ...a.command, url: `${statusUrl}/commands/${encodeURIComponent(a.command.id)}` },
      volumeId,
      volumes: a.volumes,
    });
  };

  return [
    route({
      method: 'get',
      path: '/deployments/:id/volumes',
      summary: 'The volumes the deployment mounts, by mount path',
      tags,
      request: { params: DeploymentIdParams },
      before: [can('deployment.read', itsProject)],
      responses: {
        200: { description: 'Its volumes', schema: success(DeploymentVolumeList) },
        404: { description: 'No such deployment in this organisation' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok({ deploymentId: params.id, volumes: await deployments.volumes(principalOf(req), params.id) }));
      },
    }),
    route({
      method: 'post',
      path: '/deployments/:id/volumes',
      summary: 'Attach a volume at mountPath: a new release mounts it; its data outlives releases and rollbacks',
      description: `${CHANGE} Needs the right to manage the deployment and to read the volume. A rollback keeps the deployment's volumes: they belong to the deployment, not to a release's code.`,
      tags,
      request: { params: DeploymentIdParams, body: VolumeMountRequest },
      before: [can('deployment.manage', itsProject)],
      audit: { action: 'volume.attach', resource: 'volume', idField: 'volumeId' },
      responses: {
        202: {
          description: 'Attached; its release runs after the commands accepted before it',
          schema: success(VolumeChangeAccepted),
        },
        400: { description: 'A mountPath a volume cannot take, or the command refused by the deployment' },
        404: { description: 'No such deployment or volume in this organisation (VOLUME_NOT_FOUND)' },
        409: { description: REFUSED },
      },
      handler: async ({ params, body }, req, res) => {
        const a = await deployments.attachVolume(principalOf(req), params.id, body);
        res.status(202).json(accepted(a, body.volumeId, req.baseUrl));
      },
    }),
    route({
      method: 'delete',
      path: '/deployments/:id/volumes/:volumeId',
      summary: 'Detach a volume: a new release without it; the volume and its data stay',
      description: CHANGE,
      tags,
      request: { params: VolumeAttachParams },
      before: [can('deployment.manage', itsProject)],
      audit: { action: 'volume.detach', resource: 'volume' },
      responses: {
        202: {
          description: 'Detached; its release runs after the commands accepted before it',
          schema: success(VolumeChangeAccepted),
        },
        404: { description: 'No such deployment, or the volume is not attached to it (VOLUME_NOT_FOUND)' },
        409: { description: 'CONFLICT: the deployment is busy with a release; wait' },
      },
      handler: async ({ params }, req, res) => {
        const a = await deployments.detachVolume(principalOf(req), params.id, params.volumeId);
        res.status(202).json(accepted(a, params.volumeId, req.baseUrl));
      },
    }),
  ];
}
