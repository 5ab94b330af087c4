import { randomUUID } from 'node:crypto';

import type { Db } from 'mongodb';

import { guard, isDuplicateKey } from '../db/mongo';
import { requiredSecretBox, type Sealed } from '../secrets/box';
import { CLOUD_CREDENTIALS, type CloudCredentialsOf, type CloudProvider } from './credentials';

/** What may be shown of saved credentials: never a secret, enough to tell which account they are. */
export interface CloudCredentialsSummary {
  provider: CloudProvider;
  /** The identity they sign in as: the service account's e-mail, the client ID, the access key ID. */
  identity: string;
  regions: string[];
  /** The repository source deploys push to, when one is set. */
  registry: string | null;
  verifiedAt: Date;
  updatedAt: Date;
  updatedBy: string;
}

interface CredentialsRecord extends CloudCredentialsSummary {
  /** `<orgId>/<provider>`: one set per organisation and cloud; a PUT replaces it. */
  _id: string;
  orgId: string;
  sealed: Sealed;
}

/** Credentials given to a PUT and not yet tried: the check runs in an activity, which reads them here by ID. */
interface CandidateRecord {
  _id: string;
  orgId: string;
  provider: CloudProvider;
  sealed: Sealed;
  createdAt: Date;
}

const recordId = (orgId: string, provider: CloudProvider) => `${orgId}/${provider}`;
// The additional data binds each sealed value to its record: a value copied into another org's record does not open.
const liveAad = (id: string) => `cloud-credentials/${id}`;
const candidateAad = (c: Pick<CandidateRecord, '_id' | 'orgId' | 'provider'>) =>
  `cloud-credentials-candidate/${c._id}/${c.orgId}/${c.provider}`;

export function identityOf<P extends CloudProvider>(provider: P, c: CloudCredentialsOf[P]): string {
  if (provider === 'cloud_a_run') return (c as CloudCredentialsOf['cloud_a_run']).serviceAccountKey.client_email;
  if (provider === 'cloud_b_container_apps') return (c as CloudCredentialsOf['cloud_b_container_apps']).clientId;
  const ecs = c as CloudCredentialsOf['cloud_c_ecs_fargate'];
  return ecs.roleArn ?? ecs.accessKeyId;
}

/**
 * Organisations' cloud credentials, sealed under SECRETS_KEY (docs/architecture.md, "Cloud providers"). Write-only
 * from outside: the api stores candidates and reads summaries; only the worker's activities open them.
 */
export function createCloudCredentialStore(db: Db, secretsKey: string | undefined) {
  const live = db.collection<CredentialsRecord>('cloud_credentials');
  const candidates = db.collection<CandidateRecord>('cloud_credential_candidates');
  const box = requiredSecretBox(secretsKey, 'cloud credentials are kept sealed, and cannot be without the key');

  const parse = <P extends CloudProvider>(provider: P, plain: string) =>
    CLOUD_CREDENTIALS[provider].parse(JSON.parse(plain)) as CloudCredentialsOf[P];

  return {
    async ensureIndexes() {
      await guard('cloudCredentials.createIndexes', () => live.createIndex({ orgId: 1 }));
    },

    /** Keeps credentials to be tried; returns the candidate's ID for the check. */
    async putCandidate<P extends CloudProvider>(orgId: string, provider: P, credentials: CloudCredentialsOf[P]) {
      const c = { _id: randomUUID(), orgId, provider };
      const sealed = box().seal(JSON.stringify(credentials), candidateAad(c));
      await guard('cloudCredentials.putCandidate', () => candidates.insertOne({ ...c, sealed, createdAt: new Date() }));
      return c._id;
    },

    async openCandidate(id: string) {
      const c = await guard('cloudCredentials.openCandidate', () => candidates.findOne({ _id: id }));
      if (!c) return null;
      return {
        orgId: c.orgId,
        provider: c.provider,
        credentials: parse(c.provider, box().open(c.sealed, candidateAad(c))),
      };
    },

    async dropCandidate(id: string): Promise<void> {
      await guard('cloudCredentials.dropCandidate', () => candidates.deleteOne({ _id: id }));
    },

    /** Makes a tried candidate the organisation's credentials for its cloud, replacing any before. */
    async promote(candidateId: string, by: string): Promise<CloudCredentialsSummary> {
      const c = await this.openCandidate(candidateId);
      if (!c) throw new Error(`credentials candidate ${candidateId} is gone`);
      const _id = recordId(c.orgId, c.provider);
      const now = new Date();
      const record: CredentialsRecord = {
        _id,
        orgId: c.orgId,
        provider: c.provider,
        identity: identityOf(c.provider, c.credentials),
        regions: c.credentials.regions,
        registry: c.credentials.registry?.repository ?? null,
        verifiedAt: now,
        updatedAt: now,
        updatedBy: by,
        sealed: box().seal(JSON.stringify(c.credentials), liveAad(_id)),
      };
      // Two PUTs at once: both upserts may try the insert, and the loser's replace then finds the winner's record.
      const put = () => live.replaceOne({ _id }, record, { upsert: true });
      await guard('cloudCredentials.promote', () =>
        put().catch((err: unknown) => {
          if (isDuplicateKey(err)) return put();
          throw err;
        }),
      );
      await candidates.deleteOne({ _id: candidateId });
      const { sealed: _s, orgId: _o, _id: _i, ...summary } = record;
      return summary;
    },

    async summary(orgId: string, provider: CloudProvider): Promise<CloudCredentialsSummary | null> {
      return guard('cloudCredentials.summary', () =>
        live.findOne({ _id: recordId(orgId, provider) }, { projection: { sealed: 0, orgId: 0, _id: 0 } }),
      );
    },

    async summaries(orgId: string): Promise<CloudCredentialsSummary[]> {
      return guard('cloudCredentials.summaries', () =>
        live.find({ orgId }, { projection: { sealed: 0, orgId: 0, _id: 0 } }).toArray(),
      );
    },

    /** The regions of each cloud the organisation has credentials for (shared/deployments/regions.ts CloudRegions). */
    async regions(orgId: string): Promise<Partial<Record<CloudProvider, string[]>>> {
      const all = await guard('cloudCredentials.regions', () =>
        live.find({ orgId }, { projection: { provider: 1, regions: 1, _id: 0 } }).toArray(),
      );
      return Object.fromEntries(all.map((c) => [c.provider, c.regions]));
    },

    /** The credentials in the clear, for an activity; null when the organisation has none for this cloud. */
    async open<P extends CloudProvider>(orgId: string, provider: P): Promise<CloudCredentialsOf[P] | null> {
      const _id = recordId(orgId, provider);
      const r = await guard('cloudCredentials.open', () => live.findOne({ _id }));
      return r ? parse(provider, box().open(r.sealed, liveAad(_id))) : null;
    },

    async remove(orgId: string, provider: CloudProvider): Promise<boolean> {
      const r = await guard('cloudCredentials.remove', () => live.deleteOne({ _id: recordId(orgId, provider) }));
      return r.deletedCount > 0;
    },

    /** Every organisation with credentials for a cloud, for the reconciler. */
    async holders(): Promise<{ orgId: string; provider: CloudProvider }[]> {
      return guard('cloudCredentials.holders', () =>
        live.find({}, { projection: { orgId: 1, provider: 1, _id: 0 } }).toArray(),
      );
    },
  };
}

export type CloudCredentialStore = ReturnType<typeof createCloudCredentialStore>;
