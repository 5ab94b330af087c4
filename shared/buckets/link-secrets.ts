import type { Sealed } from '../secrets/box';
import { requiredSecretBox } from '../secrets/box';

/**
 * A link key's secret at rest: sealed under SECRETS_KEY with the key's identity (org, bucket, access key, deployment)
 * as associated data, so a sealed value copied onto another record fails to open. Opened only by the worker, as the
 * linked deployment's containers start.
 */
export function createLinkSecretSealer(secretsKey: string | undefined) {
  const box = requiredSecretBox(secretsKey, 'a bucket link’s key cannot be stored or read without it');
  const aad = (c: { _id: string; orgId: string; bucketId: string; deploymentId: string | null }) =>
    `bucket-link-key/${c.orgId}/${c.bucketId}/${c.deploymentId ?? ''}/${c._id}`;
  return {
    seal: (c: { _id: string; orgId: string; bucketId: string; deploymentId: string | null }, secret: string): Sealed =>
      box().seal(secret, aad(c)),
    open: (c: { _id: string; orgId: string; bucketId: string; deploymentId: string | null; secretSealed: Sealed }) =>
      box().open(c.secretSealed, aad(c)),
  };
}

export type LinkSecretSealer = ReturnType<typeof createLinkSecretSealer>;
