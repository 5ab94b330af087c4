import { Router } from 'express';

import type { IdentityService } from '../../shared/identity';
import type { DeploymentService } from '../deployments/service';
import { authenticate, principalOf, requirePermission } from '../middleware/auth';
import { handle } from '../middleware/validate';
import { DeploymentIdParams, DeployRequest, ListQuery } from './schemas';
import { deploymentView } from './views';

export function compatRouter(deps: { identity: IdentityService; deployments: DeploymentService }): Router {
  const { identity, deployments } = deps;
  const can = (p: Parameters<typeof requirePermission>[1]) => requirePermission(identity, p);
  const router = Router();
  router.use(authenticate(identity));

  router.post(
    '/deploy',
    can('deployment.create'),
    handle({ body: DeployRequest }, async ({ body }, req, res) => {
      const d = await deployments.deploy(principalOf(req), body, 'compat');
      res.status(202).json({
        deploymentId: d._id,
        status: d.status,
        provider: d.provider,
        statusUrl: `${req.baseUrl}/deployments/${d._id}`,
        createdAt: d.createdAt.toISOString(),
      });
    }),
  );

  router.get(
    '/deployments',
    can('deployment.read'),
    handle({ query: ListQuery }, async ({ query }, req, res) => {
      const { items, total } = await deployments.list(principalOf(req), { ...query, origin: 'compat' });
      res.json({ deployments: items.map(deploymentView), total, limit: query.limit, offset: query.offset });
    }),
  );

  router.get(
    '/deployments/:id',
    can('deployment.read'),
    handle({ params: DeploymentIdParams }, async ({ params }, req, res) => {
      res.json(deploymentView(await deployments.get(principalOf(req), params.id)));
    }),
  );

  router.delete(
    '/deployments/:id',
    can('deployment.manage'),
    handle({ params: DeploymentIdParams }, async ({ params }, req, res) => {
      await deployments.destroy(principalOf(req), params.id);
      res.status(204).end();
    }),
  );

  return router;
}
