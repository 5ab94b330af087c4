import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import { isTaken } from './store';

/**
 * Which deployment a builder session publishes to (docs/architecture.md, "AI builder"). Immutable inserts, never an
 * update (FerretDB has no atomic read-modify-write): the session's first publish inserts seq 1, and only a target
 * that is gone (its deployment destroyed) is followed by the next seq. The _id is `<sessionId>:<seq>`, so two
 * publishes that read the same latest record make the same _id and exactly one insert wins.
 */
export interface PublicationRecord {
  _id: string;
  sessionId: string;
  orgId: string;
  seq: number;
  deploymentId: string;
  /**
   * The key the deployment is created under (its ID is derived from it): a publish that died between this insert
   * and the creation is finished by the next one, never made twice. Absent when the caller named an existing one.
   */
  idempotencyKey?: string;
  /** The checkpoint the target was first published with. */
  checkpointId: string;
  createdAt: Date;
  createdBy: string;
}

export function createPublicationStore(db: Db) {
  const col = db.collection<PublicationRecord>('builder_publications');
  return {
    ensureIndexes: () =>
      ensureIndexesWithRetry('builderPublications.createIndexes', () => col.createIndex({ sessionId: 1, seq: -1 })),

    /** The session's current target: its publication of highest seq, or undefined before the first publish. */
    async current(orgId: string, sessionId: string): Promise<PublicationRecord | undefined> {
      const [latest] = await guard('builderPublications.current', () =>
        col.find({ sessionId, orgId }).sort({ seq: -1 }).limit(1).toArray(),
      );
      return latest;
    },

    /** Inserts the record; false when another publish inserted the same seq first (re-read and follow it). */
    async insert(r: Omit<PublicationRecord, '_id'>): Promise<boolean> {
      try {
        await guard('builderPublications.insert', () => col.insertOne({ _id: `${r.sessionId}:${r.seq}`, ...r }));
        return true;
      } catch (err) {
        if (isTaken(err)) return false;
        throw err;
      }
    },
  };
}

export type PublicationStore = ReturnType<typeof createPublicationStore>;
