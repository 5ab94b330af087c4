import { randomUUID } from 'node:crypto';

import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';

import type { Authz } from '@shared/authz/authorize';
import type { LinkSecretSealer } from '@shared/buckets/link-secrets';
import { realBucketName } from '@shared/buckets/names';
import { newAccessKeyId, type ScopedKeys, ScopedKeysUnavailable } from '@shared/buckets/scoped-keys';
import type { BucketStore } from '@shared/buckets/store';
import type { BucketCredentialRecord, BucketRecord } from '@shared/buckets/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { ignore } from '@shared/ignore';
import type { KeyedLock } from '@shared/locks';
import { PLAN_POLICIES } from '@shared/plans';
import type { ProjectStore } from '@shared/projects/store';
import type { BucketUsageStore } from '@shared/usage/bucket-usage';

import { insertWithinPlan, listVisible } from '../owned';
import type { BucketDeploymentHooks } from './hooks';

export interface BucketServiceDeps {
  store: BucketStore;
  usage: Pick<BucketUsageStore, 'current' | 'emptied'>;
  /** The store with the service's own (root) credentials: only this service ever holds them. */
  s3: S3Client;
  keys: ScopedKeys;
  sealer: LinkSecretSealer;
  projects: Pick<ProjectStore, 'get'>;
  authz: Pick<Authz, 'visibility' | 'sees'>;
  deployments: BucketDeploymentHooks;
  lock: KeyedLock;
  quotaMultiplier: number;
  /** The service's own buckets (S3_BUCKET): no user bucket is ever given one of these names. */
  reserved: readonly string[];
  /** What a key's holder is told to use. */
  address: { endpoint: string; region: string; forcePathStyle: boolean };
}

export const bucketNotFound = (id: string) =>
  new AppError('BUCKET_NOT_FOUND', `No bucket ${id} in this organisation; list them with GET /platform/buckets.`, {
    bucketId: id,
  });

const s3Code = (err: unknown) => (err as { name?: string; Code?: string }).name ?? (err as { Code?: string }).Code;

/**
 * Buckets as the api keeps them (docs/architecture.md, "Buckets"): a record, a real bucket in the object store, keys
 * that open that bucket alone (MinIO service accounts, shared/buckets/scoped-keys.ts), and links that give a
 * deployment the bucket's address and a key of its own. The plan's count is checked under a per-org lock, as
 * volumes' is; everything else rests on unique indexes.
 */
export function createBucketService(deps: BucketServiceDeps) {
  const { store } = deps;

  async function get(principal: Principal, id: string): Promise<BucketRecord> {
    const b = await store.get(principal.org._id, id);
    if (!b) throw bucketNotFound(id);
    return b;
  }

  /** A scoped key's call, its unavailability said as the api's error. */
  async function keysCall<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ScopedKeysUnavailable) throw new AppError('SCOPED_KEYS_UNAVAILABLE', err.message);
      throw err;
    }
  }

  /** A new key for the bucket: the record first (so a crash leaves a key that a revoke removes), then the store's. */
  async function makeKey(
    principal: Principal,
    b: BucketRecord,
    spec: { kind: 'key' | 'link'; name: string | null; deploymentId: string | null },
  ): Promise<{ record: BucketCredentialRecord; secret: string }> {
    const max = PLAN_POLICIES[principal.org.plan].buckets.maxKeysPerBucket * deps.quotaMultiplier;
    const accessKeyId = newAccessKeyId();
    const base = {
      _id: accessKeyId,
      orgId: b.orgId,
      bucketId: b._id,
      kind: spec.kind,
      name: spec.name,
      deploymentId: spec.deploymentId,
      createdBy: principal.user._id,
      createdAt: new Date(),
    };
    await deps.lock(`bucket-keys:${b._id}`, 'bucket keys', async () => {
      const count = (await store.credentials.ofBucket(b._id)).length;
      if (count + 1 > max)
        throw new AppError(
          'QUOTA_EXCEEDED',
          `The ${principal.org.plan} plan allows ${max} keys per bucket (a link’s key counts); bucket ${b.name} has ${count}: revoke one (DELETE /platform/buckets/${b._id}/credentials/{keyId}) first.`,
          { max, count },
        );
      await store.credentials.insert(base);
    });
    try {
      const secret = await keysCall(() => deps.keys.create(b.s3Name, accessKeyId));
      if (spec.kind === 'link') {
        // A link's key is read again at every container start: its record is replaced by one with the sealed secret
        // (an insert after a delete of the same _id, never an update of a field).
        await store.credentials.remove(accessKeyId);
        await store.credentials.insert({ ...base, secretSealed: deps.sealer.seal(base, secret) });
      }
      return { record: base, secret };
    } catch (err) {
      await deps.keys
        .revoke(accessKeyId)
        .catch(ignore('the key was not made, or the store is unreachable: its record goes all the same'));
      await store.credentials.remove(accessKeyId);
      throw err;
    }
  }

  async function revoke(c: Pick<BucketCredentialRecord, '_id'>): Promise<void> {
    await keysCall(() => deps.keys.revoke(c._id));
    await store.credentials.remove(c._id);
  }

  async function isEmpty(b: BucketRecord): Promise<boolean> {
    try {
      const page = await deps.s3.send(new ListObjectsV2Command({ Bucket: b.s3Name, MaxKeys: 1 }));
      return (page.KeyCount ?? 0) === 0;
    } catch (err) {
      if (s3Code(err) === 'NoSuchBucket') return true;
      throw err;
    }
  }

  /** Deletes every object (and every version, should versioning have been turned on) of the bucket. */
  async function empty(b: BucketRecord): Promise<void> {
    for (;;) {
      let page;
      try {
        page = await deps.s3.send(new ListObjectVersionsCommand({ Bucket: b.s3Name, MaxKeys: 1000 }));
      } catch (err) {
        if (s3Code(err) === 'NoSuchBucket') return;
        throw err;
      }
      const objects = [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].map((v) => ({
        Key: v.Key!,
        ...(v.VersionId && v.VersionId !== 'null' ? { VersionId: v.VersionId } : {}),
      }));
      if (objects.length === 0) return;
      await deps.s3.send(new DeleteObjectsCommand({ Bucket: b.s3Name, Delete: { Objects: objects, Quiet: true } }));
    }
  }

  /** Takes the bucket off a linked deployment (a new release without its variables) and revokes the link's key. */
  async function unlinkOne(principal: Principal, b: BucketRecord, deploymentId: string): Promise<unknown> {
    let release: unknown;
    try {
      release = await deps.deployments.removeBucketRefs(principal, deploymentId, b._id);
    } catch (err) {
      // A deployment being destroyed (or gone): no release to ship, its references go with it.
      if (!(err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND')) throw err;
      await deps.deployments.dropBucketRefs(deploymentId, b._id);
    }
    const keys = (await store.credentials.ofBucket(b._id)).filter(
      (c) => c.kind === 'link' && c.deploymentId === deploymentId,
    );
    for (const c of keys) await revoke(c);
    return release;
  }

  return {
    get,

    /** The bucket with what it holds, measured at most a minute ago. */
    async getWithUsage(principal: Principal, id: string) {
      const b = await get(principal, id);
      return { bucket: b, usage: await deps.usage.current(b) };
    },

    async create(principal: Principal, body: { name: string; projectId?: string | undefined }): Promise<BucketRecord> {
      const orgId = principal.org._id;
      if (body.projectId && !(await deps.projects.get(orgId, body.projectId)))
        throw new AppError('PROJECT_NOT_FOUND', `No project ${body.projectId} in this organisation.`, {
          projectId: body.projectId,
        });
      const maxCount = PLAN_POLICIES[principal.org.plan].buckets.maxCount * deps.quotaMultiplier;
      const record: BucketRecord = {
        _id: randomUUID(),
        orgId,
        projectId: body.projectId ?? null,
        name: body.name,
        s3Name: realBucketName(body.name, deps.reserved),
        createdBy: principal.user._id,
        createdAt: new Date(),
      };
      await insertWithinPlan({
        lock: deps.lock,
        key: `buckets:${orgId}`,
        what: 'bucket quota',
        over: async () => {
          const count = await store.count(orgId);
          if (count + 1 <= maxCount) return undefined;
          return new AppError(
            'QUOTA_EXCEEDED',
            `The ${principal.org.plan} plan allows ${maxCount} buckets; this organisation has ${count}: delete one first.`,
            { maxCount, count },
          );
        },
        insert: () => store.insert(record),
        taken: () =>
          new AppError(
            'CONFLICT',
            `A bucket named ${body.name} exists in this organisation; choose another name or use that one.`,
            { name: body.name },
          ),
      });
      try {
        await deps.s3.send(new CreateBucketCommand({ Bucket: record.s3Name }));
      } catch (err) {
        await store.remove(record._id);
        throw err;
      }
      return record;
    },

    async list(principal: Principal, q: { projectId?: string | undefined; limit: number; offset: number }) {
      return listVisible(deps.authz, principal, q, (filter) => store.list(principal.org._id, filter));
    },

    /**
     * Deletes the bucket: refused while it holds objects unless `force` (then emptied first). Its links are taken
     * off their deployments (new releases) and every key is revoked before the record goes.
     */
    async remove(principal: Principal, id: string, force: boolean): Promise<BucketRecord> {
      const b = await get(principal, id);
      const notEmpty = () =>
        new AppError(
          'BUCKET_NOT_EMPTY',
          `Bucket ${b.name} holds objects; delete them first, or delete with ?force=true to delete them with it.`,
          { bucketId: id },
        );
      if (!force && !(await isEmpty(b))) throw notEmpty();
      const linked = [...new Set((await deps.deployments.refsTo(b.orgId, b._id)).map((r) => r.deploymentId))];
      for (const deploymentId of linked) await unlinkOne(principal, b, deploymentId);
      // Keys go before the objects: nothing can write while the bucket is emptied.
      for (const c of await store.credentials.ofBucket(b._id)) await revoke(c);
      if (force) await empty(b);
      try {
        await deps.s3.send(new DeleteBucketCommand({ Bucket: b.s3Name }));
      } catch (err) {
        const code = s3Code(err);
        if (code === 'BucketNotEmpty') throw notEmpty();
        if (code !== 'NoSuchBucket') throw err;
      }
      await deps.usage.emptied(b);
      await store.remove(b._id);
      return b;
    },

    /** A key that opens this bucket only; its secret is in this answer and nowhere else. */
    async createKey(principal: Principal, id: string, body: { name?: string | undefined }) {
      const b = await get(principal, id);
      const { record, secret } = await makeKey(principal, b, {
        kind: 'key',
        name: body.name ?? null,
        deploymentId: null,
      });
      return { bucket: b, record, secret, address: deps.address };
    },

    async listKeys(principal: Principal, id: string) {
      await get(principal, id);
      return store.credentials.ofBucket(id);
    },

    /** Revokes a key at once: the store refuses it from the next request on. A link's key is revoked by unlinking. */
    async revokeKey(principal: Principal, id: string, keyId: string): Promise<BucketCredentialRecord> {
      const b = await get(principal, id);
      const c = await store.credentials.get(b._id, keyId);
      if (!c)
        throw new AppError(
          'CREDENTIAL_NOT_FOUND',
          `Bucket ${b.name} has no key ${keyId}; list them with GET /platform/buckets/${id}/credentials.`,
          { bucketId: id, keyId },
        );
      if (c.kind === 'link')
        throw new AppError(
          'CONFLICT',
          `Key ${keyId} belongs to the link with deployment ${c.deploymentId}; unlink it (DELETE /platform/buckets/${id}/links/${c.deploymentId}), which revokes its key.`,
          { bucketId: id, keyId, deploymentId: c.deploymentId },
        );
      await revoke(c);
      return c;
    },

    /**
     * Gives a deployment the bucket's address and a key of its own (S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID,
     * S3_SECRET_ACCESS_KEY, S3_REGION, S3_FORCE_PATH_STYLE), shipped as a new release.
     */
    async link(principal: Principal, id: string, deploymentId: string) {
      const b = await get(principal, id);
      const deployment = await deps.deployments.get(principal, deploymentId);
      if (deployment.projectId !== b.projectId)
        throw new AppError(
          'CONFLICT',
          `Deployment ${deployment.name} is ${deployment.projectId ? `in project ${deployment.projectId}` : 'in no project'} and bucket ${b.name} is ${b.projectId ? `project ${b.projectId}’s` : 'the organisation’s'}; a bucket is linked to deployments of its own project.`,
          { bucketId: id, deploymentId },
        );
      const release = await deps.deployments.addBucketRefs(principal, deploymentId, b._id, async () => {
        const { record } = await makeKey(principal, b, { kind: 'link', name: null, deploymentId });
        return () => revoke(record);
      });
      return { bucket: b, deploymentId, release };
    },

    async unlink(principal: Principal, id: string, deploymentId: string) {
      const b = await get(principal, id);
      const refs = (await deps.deployments.refsTo(b.orgId, id)).filter((r) => r.deploymentId === deploymentId);
      if (refs.length === 0)
        throw new AppError('LINK_NOT_FOUND', `Bucket ${b.name} is not linked to deployment ${deploymentId}.`, {
          bucketId: id,
          deploymentId,
        });
      const release = await unlinkOne(principal, b, deploymentId);
      return { bucket: b, deploymentId, env: refs.map((r) => r.name).sort(), release };
    },

    async links(principal: Principal, id: string) {
      const b = await get(principal, id);
      const byDeployment = new Map<string, string[]>();
      for (const r of await deps.deployments.refsTo(b.orgId, id))
        byDeployment.set(r.deploymentId, [...(byDeployment.get(r.deploymentId) ?? []), r.name]);
      return [...byDeployment].map(([deploymentId, env]) => ({ deploymentId, env: env.sort() }));
    },
  };
}

export type BucketService = ReturnType<typeof createBucketService>;
