import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';
import type { Sealed } from '../secrets/box';
import type { ReleaseEnvRef, ReleaseMount } from './attachments';

export const RELEASE_TRIGGERS = ['deploy', 'redeploy', 'rollback'] as const;
export type ReleaseTrigger = (typeof RELEASE_TRIGGERS)[number];

/**
 * starting: its instances are being started beside the serving release; active: it serves (or would, stopped);
 * superseded: it served and a later release replaced it (a rollback target); failed: it never became ready.
 */
export const RELEASE_STATUSES = ['starting', 'active', 'superseded', 'failed'] as const;
export type ReleaseStatus = (typeof RELEASE_STATUSES)[number];

/**
 * What a release's image was made from, as a person checks it against their own copy: the image reference and the
 * image it resolved to, the uploaded zip by its SHA-256 and size, or the repository (never with credentials), the
 * branch asked for and the commit actually built.
 */
export type ReleaseSource =
  | { type: 'image'; image: string; imageId: string }
  | { type: 'upload'; uploadId: string; sha256: string; size: number }
  | { type: 'git'; repoUrl: string; branch?: string; commit: string };

/**
 * One release of a deployment (docs/architecture.md, "A deployment's lifecycle, as workflows"): what ran, inserted once
 * and never rewritten, except `status` and the times beside it, which only the deployment's own workflow writes (one
 * command at a time, so no read-modify-write race on FerretDB).
 */
export interface ReleaseRecord {
  /** `<deploymentId>:<revision>`; the unique (deploymentId, revision) index guards it too. */
  _id: string;
  deploymentId: string;
  orgId: string;
  revision: number;
  /** The reference as deployed, for people; `imageId` is what runs. */
  image: string;
  /** The engine's image ID (`sha256:…`): a rollback runs exactly this, with no registry and no rebuild. */
  imageId: string;
  port: number;
  /**
   * Changes when the image, the port, any env name or value, a mount or a reference changes; no value can be read
   * back from it.
   */
  configHash: string;
  /** Every variable the containers get: the sealed ones and the references' names. */
  envNames: string[];
  /** The values, sealed for the deployment (deployment-env.ts); opened only where the container starts. */
  envSealed?: Sealed;
  /**
   * The volumes its containers mount and the variables whose values other resources hold, as the deployment's
   * attachments were when the release was made (attachments.ts). Absent on releases from before attachments: none.
   */
  mounts?: ReleaseMount[];
  envRefs?: ReleaseEnvRef[];
  trigger: ReleaseTrigger;
  /** For a rollback: the release whose image and env it brought back. */
  rollbackOf?: number;
  /**
   * What its image was made from; a rollback or an env change carries its earlier release's. Absent on releases
   * recorded before sources were, and on those whose code came from a release that had none.
   */
  source?: ReleaseSource;
  createdAt: Date;
  status: ReleaseStatus;
  /** When it first became ready: a release that has one was healthy once, and may be rolled back to. */
  readyAt?: Date;
  endedAt?: Date;
}

/**
 * Environment values a redeploy brings, stored by the api before it sends the command: the command carries this
 * document's ID, never the values (they would land in workflow history). Immutable.
 */
export interface EnvSetRecord {
  _id: string;
  deploymentId: string;
  orgId: string;
  envNames: string[];
  envSealed?: Sealed;
  createdAt: Date;
}

/** The newest releases of a deployment, as status reads show them. */
export interface ReleasesSummary {
  total: number;
  recent: Omit<ReleaseRecord, 'envSealed'>[];
}

export const releaseId = (deploymentId: string, revision: number) => `${deploymentId}:${revision}`;

export function createReleaseStore(db: Db) {
  const col = db.collection<ReleaseRecord>('deployment_releases');
  const envSets = db.collection<EnvSetRecord>('deployment_env_sets');

  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('releases.createIndexes', async () => {
        await col.createIndex({ deploymentId: 1, revision: 1 }, { unique: true });
        await envSets.createIndex({ deploymentId: 1, createdAt: -1 });
      });
    },

    /**
     * Inserts the release; a retried insert of the same revision returns the one already there (the workflow that
     * owns the revision numbers is the only writer, so it is the same release).
     */
    async insert(release: ReleaseRecord): Promise<ReleaseRecord> {
      try {
        await guard('releases.insert', () => col.insertOne(release));
        return release;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        const existing = await guard('releases.insertExisting', () =>
          col.findOne({ deploymentId: release.deploymentId, revision: release.revision }),
        );
        if (!existing) throw err;
        return existing;
      }
    },

    async get(deploymentId: string, revision: number) {
      return guard('releases.get', () => col.findOne({ deploymentId, revision }));
    },

    /** Newest first; `envSealed` is never part of a listing. */
    async list(deploymentId: string, q: { limit: number; offset: number }) {
      const filter = { deploymentId };
      const [items, total] = await Promise.all([
        guard('releases.list', () =>
          col
            .find(filter, { projection: { envSealed: 0 } })
            .sort({ revision: -1 })
            .skip(q.offset)
            .limit(q.limit)
            .toArray(),
        ),
        guard('releases.count', () => col.countDocuments(filter)),
      ]);
      return { items: items as Omit<ReleaseRecord, 'envSealed'>[], total };
    },

    /** Only the deployment's workflow calls this, one command at a time: a plain $set is safe. */
    async setStatus(deploymentId: string, revision: number, status: ReleaseStatus, at: Date) {
      const set: Partial<ReleaseRecord> = { status };
      if (status === 'superseded' || status === 'failed') set.endedAt = at;
      await guard('releases.setStatus', () => col.updateOne({ deploymentId, revision }, { $set: set }));
      // The first time only: a start after a stop keeps the release's original readyAt.
      if (status === 'active')
        await guard('releases.setReadyAt', () =>
          col.updateOne({ deploymentId, revision, readyAt: { $exists: false } }, { $set: { readyAt: at } }),
        );
    },

    async putEnvSet(set: EnvSetRecord) {
      await guard('releases.putEnvSet', () => envSets.insertOne(set));
    },

    async getEnvSet(id: string) {
      return guard('releases.getEnvSet', () => envSets.findOne({ _id: id }));
    },
  };
}

export type ReleaseStore = ReturnType<typeof createReleaseStore>;
