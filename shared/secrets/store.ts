import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { Sealed } from './box';

export const SECRET_ENVIRONMENTS = ['DEVELOPMENT', 'STAGING', 'PRODUCTION'] as const;
export type SecretEnvironment = (typeof SECRET_ENVIRONMENTS)[number];

/** A vault secret; the value exists only encrypted (AES-256-GCM), never in a read model. */
export interface SecretRecord {
  _id: string;
  orgId: string;
  name: string;
  environment: SecretEnvironment;
  /**
   * Hosts a Git token may be sent to (lower case); the worker sends it nowhere else. Absent on secrets stored
   * before the binding existed: those cannot be used for Git until stored again with their hosts.
   */
  allowedHosts?: string[];
  value: Sealed;
  createdBy: string;
  createdAt: Date;
  /** When the value was last replaced (PUT); absent on a secret never replaced. */
  updatedAt?: Date;
}

export function createSecretStore(db: Db) {
  const col = db.collection<SecretRecord>('secrets');
  return {
    ensureIndexes: () =>
      ensureIndexesWithRetry('secrets.createIndexes', () =>
        col.createIndex({ orgId: 1, name: 1, environment: 1 }, { unique: true }),
      ),
    insert: (s: SecretRecord) => guard('secrets.insert', () => col.insertOne(s)),
    get: (orgId: string, id: string) => guard('secrets.get', () => col.findOne({ _id: id, orgId })),
    list: (orgId: string) =>
      guard('secrets.list', () =>
        col
          .find({ orgId }, { projection: { value: 0 } })
          .sort({ name: 1, environment: 1 })
          .toArray(),
      ),
    /** Replaces the sealed value in one update; false when the org has no such secret. */
    setValue: async (orgId: string, id: string, value: Sealed, updatedAt: Date) =>
      (await guard('secrets.setValue', () => col.updateOne({ _id: id, orgId }, { $set: { value, updatedAt } })))
        .matchedCount === 1,
    remove: async (orgId: string, id: string) =>
      (await guard('secrets.remove', () => col.deleteOne({ _id: id, orgId }))).deletedCount === 1,
  };
}

export type SecretStore = ReturnType<typeof createSecretStore>;
