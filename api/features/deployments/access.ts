import type { Request } from 'express';

import { deploymentNotFound } from '@shared/deployments/errors';
import type { StatusSnapshot } from '@shared/deployments/read-model';
import { AppError } from '@shared/errors';

import { type CanOptions, principalOf, projectFrom } from '../../http/auth';
import type { DeploymentService } from './service';

/** A deploy naming `projectId` is judged by the caller's role in that project; one of no project by the org role. */
export const newDeploymentProject: CanOptions = { project: projectFrom.body('projectId') };

const readByRequest = new WeakMap<Request, { id: string; read: Promise<StatusSnapshot> }>();

/**
 * The deployment's status snapshot, read once per request: the access check's project lookup and a status read's
 * handler share it (a second Redis round trip and parse per read otherwise).
 */
export function requestStatus(
  deployments: Pick<DeploymentService, 'status'>,
  req: Request,
  id: string,
): Promise<StatusSnapshot> {
  const kept = readByRequest.get(req);
  if (kept?.id === id) return kept.read;
  const read = deployments.status(principalOf(req), id);
  readByRequest.set(req, { id, read });
  return read;
}

/**
 * `/deployments/:id…`: the project the deployment lives in, so its project role decides. A deployment the caller's
 * organisation does not hold resolves to none (the handler answers 404), and one in a project the caller cannot see
 * is reported exactly as an unknown deployment.
 */
export const deploymentProject = (deployments: Pick<DeploymentService, 'status'>, param = 'id'): CanOptions => ({
  // From the status read model: the project never changes, and a destroyed deployment's entry is a tombstone.
  project: (req) =>
    requestStatus(deployments, req, String(req.params[param])).then(
      (d) => d.record.projectId,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND') return undefined;
        throw err;
      },
    ),
  notFound: (req) => deploymentNotFound(String(req.params[param])),
});
