import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { DomainCheck, DomainClaim, DomainRecord, DomainStatus } from './types';

/**
 * Custom domains' records and verified claims. One record per host per organisation rests on a unique index; the one
 * organisation a verified host belongs to rests on the claim's `_id` (the host): the first insert wins and every
 * other is a duplicate key. A record's status and last check are plain sets, read only for display: nothing here is
 * a read-modify-write.
 */
export function createDomainStore(db: Db) {
  const domains = db.collection<DomainRecord>('domains');
  const claims = db.collection<DomainClaim>('domain_claims');

  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('domains.createIndexes', async () => {
        await domains.createIndex({ orgId: 1, hostname: 1 }, { unique: true });
        await domains.createIndex({ deploymentId: 1 });
        await domains.createIndex({ orgId: 1, projectId: 1 });
        await claims.createIndex({ domainId: 1 });
      });
    },

    /** A duplicate (orgId, hostname) throws the driver's 11000 inside a DatabaseError. */
    insert: (d: DomainRecord) => guard('domains.insert', () => domains.insertOne(d)),

    /** The org's domain, or null: another organisation's reads as absent. */
    get: (orgId: string, id: string) => guard('domains.get', () => domains.findOne({ _id: id, orgId })),

    /** By ID alone: for the worker. */
    getAny: (id: string) => guard('domains.getAny', () => domains.findOne({ _id: id })),

    async list(
      orgId: string,
      q: { limit: number; offset: number; projectId?: string; deploymentId?: string; visibleProjects?: string[] },
    ) {
      const filter: Filter<DomainRecord> = { orgId };
      if (q.projectId) filter.projectId = q.projectId;
      if (q.deploymentId) filter.deploymentId = q.deploymentId;
      if (q.visibleProjects) filter.$or = [{ projectId: null }, { projectId: { $in: q.visibleProjects } }];
      const [items, total] = await Promise.all([
        guard('domains.list', () =>
          domains.find(filter).sort({ hostname: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('domains.count', () => domains.countDocuments(filter)),
      ]);
      return { items, total };
    },

    count: (orgId: string) => guard('domains.countOfOrg', () => domains.countDocuments({ orgId })),

    ofDeployment: (deploymentId: string) =>
      guard('domains.ofDeployment', () => domains.find({ deploymentId }).toArray()),

    /** Every verified domain: what the router should route (the reconciler's restore). */
    verified: () => guard('domains.verified', () => domains.find({ status: 'verified' }).toArray()),

    async setCheck(id: string, status: DomainStatus, check: DomainCheck, verifiedAt?: Date): Promise<void> {
      await guard('domains.setCheck', () =>
        domains.updateOne({ _id: id }, { $set: { status, lastCheck: check, ...(verifiedAt ? { verifiedAt } : {}) } }),
      );
    },

    async setStatus(id: string, status: DomainStatus): Promise<void> {
      await guard('domains.setStatus', () => domains.updateOne({ _id: id }, { $set: { status } }));
    },

    async setRouted(id: string, routedAt: Date | null): Promise<void> {
      await guard('domains.setRouted', () => domains.updateOne({ _id: id }, { $set: { routedAt } }));
    },

    async remove(id: string): Promise<void> {
      await guard('domains.remove', () => domains.deleteOne({ _id: id }));
    },

    claims: {
      /** The host's verified claim, whoever holds it. */
      get: (hostname: string) => guard('domainClaims.get', () => claims.findOne({ _id: hostname })),
      /**
       * The host's claim if its domain still exists. A delete removes the record before the claim, so one that stopped
       * in between leaves a claim of no domain: it is removed here, which is safe because a domain's id is never
       * used again.
       */
      async live(hostname: string): Promise<DomainClaim | null> {
        const claim = await guard('domainClaims.get', () => claims.findOne({ _id: hostname }));
        if (!claim) return null;
        if (await guard('domains.getAny', () => domains.findOne({ _id: claim.domainId }))) return claim;
        await guard('domainClaims.removeOrphan', () => claims.deleteOne({ _id: hostname, domainId: claim.domainId }));
        return null;
      },
      /** Fails with the driver's 11000 when another claim holds the host. */
      insert: (c: DomainClaim) => guard('domainClaims.insert', () => claims.insertOne(c)),
      /** Removes the domain's own claim only: another domain's claim of the same host is never touched. */
      async removeOf(domainId: string): Promise<void> {
        await guard('domainClaims.remove', () => claims.deleteMany({ domainId }));
      },
    },
  };
}

export type DomainStore = ReturnType<typeof createDomainStore>;
