import { BUCKET_ENV, BUCKET_ENV_ORDER } from '@shared/buckets/env';
import { type AttachmentStore, type EnvRefAttachment, envRefTargetId } from '@shared/deployments/attachments';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { currentRequestId } from '@shared/request-context';
import type { EnvSealer } from '@shared/secrets/deployment-env';

import type { DeploymentService } from '../deployments/service';

/** What buckets need of deployments: finding one, and putting a bucket's variables on it (or taking them off). */
export interface BucketDeploymentHooks {
  /** The deployment, or DEPLOYMENT_NOT_FOUND (another organisation's, or one the caller cannot see, alike). */
  get(principal: Principal, deploymentId: string): Promise<{ _id: string; name: string; projectId: string | null }>;
  /**
   * Puts the bucket's variables on the deployment as references, then `withKey` (the link's key is made there), then
   * a new release; a refusal anywhere takes the references back out and calls the undo `withKey` returned.
   */
  addBucketRefs(
    principal: Principal,
    deploymentId: string,
    bucketId: string,
    withKey: () => Promise<() => Promise<void>>,
  ): Promise<unknown>;
  /** Takes the bucket's variables off the deployment, shipped as a new release; undefined when it had none. */
  removeBucketRefs(principal: Principal, deploymentId: string, bucketId: string): Promise<unknown>;
  /** The references' documents alone, for a deployment that is gone (no release to ship). */
  dropBucketRefs(deploymentId: string, bucketId: string): Promise<void>;
  /** The deployments whose env reads the bucket, and the names. */
  refsTo(orgId: string, bucketId: string): Promise<{ deploymentId: string; name: string }[]>;
}

/**
 * Buckets reach a deployment's env as databases do (api/features/databases/hooks.ts): one immutable reference
 * document per variable (its name unique in the deployment, so a second bucket on the same deployment conflicts on
 * S3_BUCKET at once), then a new release that copies the deployment's attachments.
 */
export function bucketDeploymentHooks(deps: {
  deployments: Pick<DeploymentService, 'get' | 'remount'>;
  attachments: AttachmentStore;
  env: Pick<EnvSealer, 'open'>;
}): BucketDeploymentHooks {
  const { deployments, attachments } = deps;
  const volumesOf = async (deploymentId: string) =>
    (await attachments.listByDeployment(deploymentId)).filter((a) => a.kind === 'volume').length;
  const refsOf = async (deploymentId: string, bucketId: string) =>
    (await attachments.listByDeployment(deploymentId)).filter(
      (a): a is EnvRefAttachment => a.kind === 'env' && a.ref.type === 'bucket' && a.ref.bucketId === bucketId,
    );

  return {
    async get(principal, deploymentId) {
      const d = await deployments.get(principal, deploymentId);
      return { _id: d._id, name: d.name, projectId: d.projectId ?? null };
    },

    async addBucketRefs(principal, deploymentId, bucketId, withKey) {
      const d = await deployments.get(principal, deploymentId);
      const plain = Object.keys(deps.env.open(d));
      const names = BUCKET_ENV_ORDER.map((f) => BUCKET_ENV[f]);
      const clash = names.filter((n) => plain.includes(n));
      if (clash.length)
        throw new AppError(
          'CONFLICT',
          `Deployment ${d.name} sets ${clash.join(', ')} itself; unset ${clash.length === 1 ? 'it' : 'them'} (PATCH /platform/deployments/${deploymentId}/env {"unset": ${JSON.stringify(clash)}}) and link again.`,
          { deploymentId, envNames: clash },
        );
      const requestId = currentRequestId() ?? `bucket:${bucketId}`;
      const undoRefs = async () => {
        for (const n of names) await attachments.removeEnvRef(deploymentId, n, { requestId });
      };
      for (const field of BUCKET_ENV_ORDER) {
        const name = BUCKET_ENV[field];
        const inserted = await attachments.insertEnvRef({
          deploymentId,
          orgId: d.orgId,
          name,
          ref: { type: 'bucket', bucketId, field },
          requestId,
        });
        if (!inserted.ok) {
          await undoRefs();
          const other = inserted.existing?.kind === 'env' ? inserted.existing.ref : undefined;
          throw new AppError(
            'CONFLICT',
            other?.type === 'bucket' && other.bucketId === bucketId
              ? `Deployment ${d.name} is linked to this bucket already.`
              : `Deployment ${d.name} reads ${name} from ${other ? `${other.type} ${envRefTargetId(other)}` : 'another resource'} already; unlink that first (a deployment has one linked bucket).`,
            { deploymentId, envName: name },
          );
        }
      }
      let undoKey: () => Promise<void>;
      try {
        undoKey = await withKey();
      } catch (err) {
        await undoRefs();
        throw err;
      }
      return deployments.remount(principal, deploymentId, await volumesOf(deploymentId), async () => {
        await undoRefs();
        await undoKey();
      });
    },

    async removeBucketRefs(principal, deploymentId, bucketId) {
      const d = await deployments.get(principal, deploymentId);
      const existing = await refsOf(deploymentId, bucketId);
      if (existing.length === 0) return undefined;
      for (const a of existing) await attachments.removeEnvRef(deploymentId, a.name);
      return deployments.remount(principal, deploymentId, await volumesOf(d._id), async () => {
        for (const a of existing)
          await attachments.insertEnvRef({ deploymentId, orgId: d.orgId, name: a.name, ref: a.ref });
      });
    },

    async dropBucketRefs(deploymentId, bucketId) {
      for (const a of await refsOf(deploymentId, bucketId)) await attachments.removeEnvRef(deploymentId, a.name);
    },

    refsTo: (orgId, bucketId) => attachments.listByRef(orgId, { type: 'bucket', bucketId }),
  };
}
