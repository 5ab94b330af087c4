import type { Sealed } from '../secrets/box';

/**
 * A bucket an organisation (or one of its projects) owns in the object store. `name` is the user's label, unique in
 * the organisation; `s3Name` is the store's real bucket, generated (`u-<8 hex>-<name>`), unique across the store and
 * never one of the service's own buckets (shared/buckets/names.ts). The record is written once and removed on delete.
 */
export interface BucketRecord {
  _id: string;
  orgId: string;
  projectId: string | null;
  name: string;
  s3Name: string;
  createdBy: string;
  createdAt: Date;
}

/**
 * A key that opens one bucket only: a MinIO service account whose inline policy names that bucket. The access key is
 * the identifier (`_id`); of the secret nothing is kept for a key handed to a person (it is shown once), and for a
 * link's key it is sealed under SECRETS_KEY, since every start of the deployment's containers reads it again.
 */
export interface BucketCredentialRecord {
  /** The access key ID. */
  _id: string;
  orgId: string;
  bucketId: string;
  /** `key`: made by a person through the api; `link`: made for one deployment's env, revoked with the link. */
  kind: 'key' | 'link';
  name: string | null;
  /** The deployment a link's key is for; null for a person's key. */
  deploymentId: string | null;
  /** A link's secret, sealed with the credential's identity as associated data; absent for a person's key. */
  secretSealed?: Sealed;
  createdBy: string;
  createdAt: Date;
}

/** One measurement of what a bucket holds; inserted, never updated (shared/usage/bucket-usage.ts). */
export interface BucketUsage {
  objects: number;
  bytes: number;
  measuredAt: Date;
  /** The listing stopped at its cap: objects and bytes are at least these. */
  partial: boolean;
}
