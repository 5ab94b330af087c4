import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';

/**
 * What belongs to a deployment rather than to its code: volumes mounted into its containers, and environment
 * variables whose value another resource holds (a database's connection URL). Each is one immutable document whose
 * `_id` is the thing that may be taken only once, and whose `slot` is the place in the deployment it fills:
 * - `volume:<volumeId>`: a volume is mounted by at most one deployment (one writer); slot `mount:<deploymentId>:<path>`,
 *   so two volumes never share a mount path of one deployment;
 * - `env:<deploymentId>:<NAME>`: one reference per name of a deployment; its slot is its `_id`.
 * Both keys are unique indexes, so a concurrent second attach fails on insert: nothing here is decided by reading
 * first (FerretDB does not make a read-modify-write atomic). A change is an insert or a delete, never an update.
 *
 * A release copies the attachments it starts with (activities/deployment/releases.ts): a change ships as a new
 * release, and a rollback keeps the deployment's current attachments (data never disappears by a rollback).
 */

/** What of a linked bucket a variable holds (shared/buckets/env.ts names them). */
export const BUCKET_ENV_FIELDS = [
  'endpoint',
  'bucket',
  'accessKeyId',
  'secretAccessKey',
  'region',
  'forcePathStyle',
] as const;
export type BucketEnvField = (typeof BUCKET_ENV_FIELDS)[number];

/**
 * What an environment reference points at; its value is read when a container starts, never stored here: a
 * database's connection URL, or one field of a linked bucket's address and key (the key is the link's own).
 */
export type EnvRefTarget =
  { type: 'database'; databaseId: string } | { type: 'bucket'; bucketId: string; field: BucketEnvField };

/** The resource a reference reads, as a message names it. */
export const envRefTargetId = (ref: EnvRefTarget): string => (ref.type === 'database' ? ref.databaseId : ref.bucketId);

interface AttachmentBase {
  _id: string;
  deploymentId: string;
  orgId: string;
  /** The place it fills in the deployment; unique. */
  slot: string;
  /** The request that made it: a command refused after the insert removes exactly its own document. */
  requestId?: string;
  createdAt: Date;
}

export interface VolumeAttachment extends AttachmentBase {
  kind: 'volume';
  volumeId: string;
  mountPath: string;
}

export interface EnvRefAttachment extends AttachmentBase {
  kind: 'env';
  name: string;
  ref: EnvRefTarget;
}

export type Attachment = VolumeAttachment | EnvRefAttachment;

/** A volume as a release mounts it. */
export interface ReleaseMount {
  volumeId: string;
  mountPath: string;
}

/** An environment reference as a release carries it: the name, and what its value is read from. */
export interface ReleaseEnvRef {
  name: string;
  ref: EnvRefTarget;
}

/**
 * Reads the values of a release's environment references when one of its containers starts (the worker's, so the
 * values reach the container and nothing else: never a log line, never workflow history). Returns a value for every
 * name asked; throws an ApplicationFailure (non-retryable) for a reference that cannot be resolved, with what to do.
 */
export type EnvRefResolver = (
  orgId: string,
  deploymentId: string,
  refs: ReleaseEnvRef[],
) => Promise<Record<string, string>>;

export const volumeAttachmentId = (volumeId: string) => `volume:${volumeId}`;
export const envRefAttachmentId = (deploymentId: string, name: string) => `env:${deploymentId}:${name}`;
/** Trailing slashes dropped: `/data/` and `/data` are one place. */
export const mountSlot = (deploymentId: string, mountPath: string) =>
  `mount:${deploymentId}:${mountPath.length > 1 ? mountPath.replace(/\/+$/, '') : mountPath}`;

/** Why an insert did not take: the thing was taken (by whom), or the place in the deployment is filled. */
export type AttachResult<T extends Attachment> =
  | { ok: true; attachment: T }
  | { ok: false; conflict: 'taken'; existing: T }
  | { ok: false; conflict: 'slot'; existing: Attachment | null };

/** The mounts and references of a set of attachments, each in a fixed order (mount path, name). */
export function releaseAttachments(items: Attachment[]): { mounts: ReleaseMount[]; envRefs: ReleaseEnvRef[] } {
  const mounts = items
    .filter((a): a is VolumeAttachment => a.kind === 'volume')
    .map((a) => ({ volumeId: a.volumeId, mountPath: a.mountPath }))
    .sort((a, b) => (a.mountPath < b.mountPath ? -1 : a.mountPath > b.mountPath ? 1 : 0));
  const envRefs = items
    .filter((a): a is EnvRefAttachment => a.kind === 'env')
    .map((a) => ({ name: a.name, ref: a.ref }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { mounts, envRefs };
}

/**
 * The names that are both a plain variable and a reference: a deployment may have either for a name, never both
 * (which one would the container get?).
 */
export function envRefClashes(plainNames: Iterable<string>, refNames: Iterable<string>): string[] {
  const refs = new Set(refNames);
  return [...new Set(plainNames)].filter((n) => refs.has(n)).sort();
}

export function createAttachmentStore(db: Db) {
  const col = db.collection<Attachment>('deployment_attachments');

  async function insert<T extends Attachment>(doc: T): Promise<AttachResult<T>> {
    try {
      await guard('attachments.insert', () => col.insertOne(doc));
      return { ok: true, attachment: doc };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const existing = await guard('attachments.insertExisting', () => col.findOne({ _id: doc._id }));
      if (existing) return { ok: false, conflict: 'taken', existing: existing as T };
      const filled = await guard('attachments.insertSlot', () => col.findOne({ slot: doc.slot }));
      return { ok: false, conflict: 'slot', existing: filled };
    }
  }

  return {
    async ensureIndexes() {
      // One index per command: FerretDB drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('attachments.createIndexes', async () => {
        await col.createIndex({ slot: 1 }, { unique: true });
        await col.createIndex({ deploymentId: 1 });
        await col.createIndex({ 'ref.databaseId': 1 });
        await col.createIndex({ 'ref.bucketId': 1 });
      });
    },

    /** Mounts `volumeId` at `mountPath` of the deployment, unless the volume is taken or the path filled. */
    insertVolume(a: { deploymentId: string; orgId: string; volumeId: string; mountPath: string; requestId?: string }) {
      return insert<VolumeAttachment>({
        _id: volumeAttachmentId(a.volumeId),
        kind: 'volume',
        deploymentId: a.deploymentId,
        orgId: a.orgId,
        volumeId: a.volumeId,
        mountPath: a.mountPath,
        slot: mountSlot(a.deploymentId, a.mountPath),
        ...(a.requestId ? { requestId: a.requestId } : {}),
        createdAt: new Date(),
      });
    },

    /** Gives the deployment's variable `name` the value `ref` holds, unless the name is a reference already. */
    insertEnvRef(a: { deploymentId: string; orgId: string; name: string; ref: EnvRefTarget; requestId?: string }) {
      const _id = envRefAttachmentId(a.deploymentId, a.name);
      return insert<EnvRefAttachment>({
        _id,
        kind: 'env',
        deploymentId: a.deploymentId,
        orgId: a.orgId,
        name: a.name,
        ref: a.ref,
        slot: _id,
        ...(a.requestId ? { requestId: a.requestId } : {}),
        createdAt: new Date(),
      });
    },

    /**
     * Removes the deployment's mount of the volume; with `requestId`, only the document that request made (undoing an
     * attach whose release was refused). Returns whether one was removed.
     */
    async removeVolume(deploymentId: string, volumeId: string, opts: { requestId?: string } = {}): Promise<boolean> {
      const filter = { _id: volumeAttachmentId(volumeId), deploymentId, ...opts };
      const result = await guard('attachments.removeVolume', () => col.deleteOne(filter));
      return result.deletedCount === 1;
    },

    async removeEnvRef(deploymentId: string, name: string, opts: { requestId?: string } = {}): Promise<boolean> {
      const filter = { _id: envRefAttachmentId(deploymentId, name), deploymentId, ...opts };
      const result = await guard('attachments.removeEnvRef', () => col.deleteOne(filter));
      return result.deletedCount === 1;
    },

    /** Every attachment of the deployment: mounts by path, then references by name. */
    async listByDeployment(deploymentId: string): Promise<Attachment[]> {
      const items = await guard('attachments.list', () => col.find({ deploymentId }).toArray());
      const key = (a: Attachment) => (a.kind === 'volume' ? `0${a.mountPath}` : `1${a.name}`);
      return items.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    },

    /** The deployments of the organisation whose env refers to the resource, and the name each reads it as. */
    async listByRef(
      orgId: string,
      ref: { type: 'database'; databaseId: string } | { type: 'bucket'; bucketId: string },
    ): Promise<{ deploymentId: string; name: string }[]> {
      const items = await guard('attachments.listByRef', () =>
        col
          .find(
            ref.type === 'database'
              ? { orgId, kind: 'env', 'ref.type': 'database', 'ref.databaseId': ref.databaseId }
              : { orgId, kind: 'env', 'ref.type': 'bucket', 'ref.bucketId': ref.bucketId },
          )
          .toArray(),
      );
      return items
        .flatMap((a) => (a.kind === 'env' ? [{ deploymentId: a.deploymentId, name: a.name }] : []))
        .sort((a, b) => (a.deploymentId + a.name < b.deploymentId + b.name ? -1 : 1));
    },

    /** The deployment the volume is attached to, or null. */
    async findByVolume(volumeId: string): Promise<VolumeAttachment | null> {
      const found = await guard('attachments.findByVolume', () => col.findOne({ _id: volumeAttachmentId(volumeId) }));
      return found as VolumeAttachment | null;
    },

    /** A destroyed deployment's attachments, once its containers are gone: the volumes stay, free to attach again. */
    async removeAllOf(deploymentId: string): Promise<number> {
      const result = await guard('attachments.removeAllOf', () => col.deleteMany({ deploymentId }));
      return result.deletedCount;
    },
  };
}

export type AttachmentStore = ReturnType<typeof createAttachmentStore>;
