import { type AttachmentStore, envRefTargetId } from '@shared/deployments/attachments';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { currentRequestId } from '@shared/request-context';
import type { EnvSealer } from '@shared/secrets/deployment-env';

import type { DeploymentService } from '../deployments/service';
import type { DeploymentHooks } from './service';

/**
 * Databases reach a deployment's env the way every attachment does: an immutable reference document (its name unique
 * in the deployment), then a new release that copies the deployment's attachments as they are. A release the
 * deployment refuses takes the reference back out, so the records never say what no release runs.
 */
export function deploymentHooks(deps: {
  deployments: Pick<DeploymentService, 'get' | 'remount'>;
  attachments: AttachmentStore;
  /** Opens the deployment's sealed values: their names are its plain variables (references are not among them). */
  env: Pick<EnvSealer, 'open'>;
}): DeploymentHooks {
  const { deployments, attachments } = deps;
  const volumesOf = async (deploymentId: string) =>
    (await attachments.listByDeployment(deploymentId)).filter((a) => a.kind === 'volume').length;

  return {
    async get(principal, deploymentId) {
      const d = await deployments.get(principal, deploymentId);
      return { _id: d._id, name: d.name, projectId: d.projectId ?? null, provider: d.provider };
    },

    async addDatabaseRef(principal: Principal, deploymentId: string, envName: string, databaseId: string) {
      const d = await deployments.get(principal, deploymentId);
      if (Object.keys(deps.env.open(d)).includes(envName))
        throw new AppError(
          'CONFLICT',
          `Deployment ${d.name} has an environment variable ${envName} already; unset it (PATCH /platform/deployments/${deploymentId}/env {"unset": ["${envName}"]}) or choose another envName.`,
          { deploymentId, envName },
        );
      const requestId = currentRequestId() ?? `database:${databaseId}`;
      const inserted = await attachments.insertEnvRef({
        deploymentId,
        orgId: d.orgId,
        name: envName,
        ref: { type: 'database', databaseId },
        requestId,
      });
      if (!inserted.ok)
        throw new AppError(
          'CONFLICT',
          `Deployment ${d.name} reads ${envName} from ${inserted.existing?.kind === 'env' ? `${inserted.existing.ref.type} ${envRefTargetId(inserted.existing.ref)}` : 'another resource'} already; choose another envName, or unlink that one first.`,
          { deploymentId, envName },
        );
      return deployments.remount(principal, deploymentId, await volumesOf(deploymentId), () =>
        attachments.removeEnvRef(deploymentId, envName, { requestId }),
      );
    },

    async removeDatabaseRef(principal: Principal, deploymentId: string, envName: string) {
      const d = await deployments.get(principal, deploymentId);
      const existing = (await attachments.listByDeployment(deploymentId)).find(
        (a) => a.kind === 'env' && a.name === envName,
      );
      if (!existing || existing.kind !== 'env') return undefined;
      await attachments.removeEnvRef(deploymentId, envName);
      return deployments.remount(principal, deploymentId, await volumesOf(d._id), () =>
        attachments.insertEnvRef({ deploymentId, orgId: d.orgId, name: envName, ref: existing.ref }),
      );
    },

    async refsTo(orgId: string, databaseId: string) {
      return attachments.listByRef(orgId, { type: 'database', databaseId });
    },
  };
}
