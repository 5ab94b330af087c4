import type { Request } from 'express';

import { deploymentNotFound } from '@shared/deployments/errors';
import { AppError } from '@shared/errors';

import { type CanOptions, principalOf } from '../../http/auth';
import type { DeploymentService } from '../deployments/service';
import { domainNotFound, type DomainService } from './service';

/**
 * `/domains/:id…`: the project of the domain's deployment decides with the caller's role there; a domain of another
 * organisation, or of a project the caller cannot see, is reported exactly as an unknown domain.
 */
export const domainProject = (domains: Pick<DomainService, 'get'>): CanOptions => ({
  project: (req: Request) =>
    domains.get(principalOf(req), String(req.params.id)).then(
      (d) => d.projectId ?? undefined,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'DOMAIN_NOT_FOUND') return undefined;
        throw err;
      },
    ),
  notFound: (req) => domainNotFound(String(req.params.id)),
});

/** A new domain is judged by the role in its deployment's project (read before validation: a string or nothing). */
export const newDomainProject = (deployments: Pick<DeploymentService, 'get'>): CanOptions => ({
  project: (req: Request) => {
    const id: unknown = (req.body as Record<string, unknown> | undefined)?.deploymentId;
    if (typeof id !== 'string' || !id) return Promise.resolve(undefined);
    return deployments.get(principalOf(req), id).then(
      (d) => d.projectId ?? undefined,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND') return undefined;
        throw err;
      },
    );
  },
  notFound: (req) => deploymentNotFound(String((req.body as Record<string, unknown> | undefined)?.deploymentId)),
});
