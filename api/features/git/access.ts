import type { Request } from 'express';

import { deploymentNotFound } from '@shared/deployments/errors';
import { AppError } from '@shared/errors';

import { type CanOptions, principalOf } from '../../http/auth';
import type { DeploymentService } from '../deployments/service';
import { bindingNotFound, type GitService } from './service';

/**
 * `/git/bindings/:id…`: the project of the binding's target decides with the caller's role there; another
 * organisation's binding, or one of a project the caller cannot see, reads exactly as an unknown binding.
 */
export const bindingProject = (git: Pick<GitService, 'getBinding'>): CanOptions => ({
  project: (req: Request) =>
    git.getBinding(principalOf(req), String(req.params.id)).then(
      (b) => b.projectId ?? undefined,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'GIT_BINDING_NOT_FOUND') return undefined;
        throw err;
      },
    ),
  notFound: (req) => bindingNotFound(String(req.params.id)),
});

/**
 * A new binding's project: the body's projectId, or the project of the body's deployment. An unknown deployment is
 * no project here; the service then answers its 404.
 */
export const newBindingProject = (deployments: Pick<DeploymentService, 'get'>): CanOptions => ({
  project: async (req: Request) => {
    const body = (req.body ?? {}) as { projectId?: unknown; deploymentId?: unknown };
    if (typeof body.projectId === 'string') return body.projectId;
    if (typeof body.deploymentId !== 'string') return undefined;
    return deployments.get(principalOf(req), body.deploymentId).then(
      (d) => d.projectId ?? undefined,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND') return undefined;
        throw err;
      },
    );
  },
  // A deployment in a project the caller cannot see reads as an unknown deployment, not as its project.
  notFound: (req: Request) => {
    const body = (req.body ?? {}) as { projectId?: unknown; deploymentId?: unknown };
    return typeof body.projectId !== 'string' && typeof body.deploymentId === 'string'
      ? deploymentNotFound(body.deploymentId)
      : new AppError('PROJECT_NOT_FOUND', `No project ${String(body.projectId)} in this organisation.`, {
          projectId: body.projectId,
        });
  },
});
