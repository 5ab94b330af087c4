import type { ScopedKeys } from '@shared/buckets/scoped-keys';
import type { BucketStore } from '@shared/buckets/store';

/**
 * A destroyed deployment's bucket links, once its containers are gone: each link's key is revoked in the store and its
 * record removed (the references themselves go with the deployment's other attachments). Runs in the deployment
 * workflow's destroy, so a failure is retried by the next attempt; a key already gone is success.
 */
export function createBucketDestroyHook(deps: {
  store: Pick<BucketStore, 'credentials'>;
  keys: Pick<ScopedKeys, 'revoke'>;
}) {
  return async (deploymentId: string): Promise<void> => {
    for (const key of await deps.store.credentials.ofDeployment(deploymentId)) {
      await deps.keys.revoke(key._id);
      await deps.store.credentials.remove(key._id);
    }
  };
}
