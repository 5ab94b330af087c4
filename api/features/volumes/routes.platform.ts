import type { Request } from 'express';

import { AppError } from '@shared/errors';

import { type CanOptions, principalOf, projectFrom } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { VolumesContext } from './compose';
import { CreateVolumeRequest, Volume, VolumeIdParams, VolumeList, VolumeListQuery } from './schemas';
import { volumeNotFound, type VolumeService } from './service';
import { volumeView } from './views';

/**
 * `/volumes/:id`: the project the volume belongs to decides with the caller's role there; a volume of another
 * organisation, or of a project the caller cannot see, is reported exactly as an unknown volume.
 */
const itsProject = (volumes: Pick<VolumeService, 'get'>): CanOptions => ({
  project: (req: Request) =>
    volumes.get(principalOf(req), String(req.params.id)).then(
      (v) => v.projectId ?? undefined,
      (err: unknown) => {
        // Unknown here: the handler answers 404 after the organisation-level check.
        if (err instanceof AppError && err.code === 'VOLUME_NOT_FOUND') return undefined;
        throw err;
      },
    ),
  notFound: (req) => volumeNotFound(String(req.params.id)),
});

/** Persistent volumes: storage of a fixed size that outlives the deployments it is mounted in. */
export function volumeRoutes(ctx: Pick<VolumesContext, 'volumes' | 'can'>): RouteDef[] {
  const { volumes, can } = ctx;
  const tags = ['Volumes'];
  const thisVolume = itsProject(volumes);
  return [
    route({
      method: 'post',
      path: '/volumes',
      summary: 'Create a persistent volume of sizeGb; its storage is made at once (status creating, then ready)',
      description:
        'A volume belongs to the organisation, or to projectId (judged by your role there), and outlives every deployment it is mounted in: it is removed only by DELETE. Its size is enforced: a write past it fails inside the container with "no space left on device". The plan bounds how many volumes the organisation holds and their total size (429 QUOTA_EXCEEDED).',
      tags,
      request: { body: CreateVolumeRequest },
      before: [can('volume.create', { project: projectFrom.body('projectId') })],
      responses: {
        201: { description: 'The volume, its storage being made', schema: success(Volume) },
        404: { description: 'PROJECT_NOT_FOUND: no such project in this organisation' },
        409: { description: 'CONFLICT: a volume of that name exists in the organisation' },
        429: { description: "QUOTA_EXCEEDED: the plan's volume count or total size would be passed" },
      },
      handler: async ({ body }, req, res) => {
        res.status(201).json(ok(volumeView(await volumes.create(principalOf(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/volumes',
      summary: "List volumes by name: the organisation's and those of the projects you can see",
      tags,
      request: { query: VolumeListQuery },
      before: [can('volume.read')],
      responses: { 200: { description: 'A page of volumes', schema: success(VolumeList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await volumes.list(principalOf(req), query);
        res.json(ok({ volumes: items.map(volumeView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/volumes/:id',
      summary: 'A volume, where its storage stands and the deployment that mounts it',
      tags,
      request: { params: VolumeIdParams },
      before: [can('volume.read', thisVolume)],
      responses: {
        200: { description: 'The volume', schema: success(Volume) },
        404: { description: 'VOLUME_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        const { volume, attachedTo } = await volumes.getWithHolder(principalOf(req), params.id);
        res.json(ok({ ...volumeView(volume), attachedTo }));
      },
    }),
    route({
      method: 'delete',
      path: '/volumes/:id',
      summary: 'Delete a volume and every byte on it; it reads deleting, then 404 once its storage is gone',
      tags,
      request: { params: VolumeIdParams },
      before: [can('volume.delete', thisVolume)],
      responses: {
        202: { description: 'Being deleted', schema: success(Volume) },
        404: { description: 'VOLUME_NOT_FOUND' },
        409: { description: 'VOLUME_ATTACHED: a deployment mounts it (named, with the route that detaches it)' },
      },
      handler: async ({ params }, req, res) => {
        res.status(202).json(ok(volumeView(await volumes.remove(principalOf(req), params.id))));
      },
    }),
  ];
}
