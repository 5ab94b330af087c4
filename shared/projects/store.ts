import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import { memberId, type MemberRecord, type ProjectFields, type ProjectRecord, type ProjectRole } from './types';

/** What an update writes: a value sets the field, null removes it, absent leaves it. */
export type ProjectChange = {
  [K in keyof Omit<ProjectFields, 'name'>]?: ProjectFields[K] | null;
} & { name?: string };

/**
 * Projects and their members. What must hold under concurrency rests on unique indexes (one name per org, one
 * membership per user and project); a duplicate surfaces as the driver's 11000 inside a DatabaseError
 * (isDuplicateKey), which the service turns into CONFLICT. Invariants across several documents (the last admin of
 * a project) are the service's, under a lock: FerretDB has no atomic read-modify-write (shared/db/mongo.ts).
 */
export function createProjectStore(db: Db) {
  const projects = db.collection<ProjectRecord>('projects');
  const members = db.collection<MemberRecord>('project_members');

  return {
    async ensureIndexes() {
      // One index per command: FerretDB drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('projects.createIndexes', async () => {
        await projects.createIndex({ orgId: 1, name: 1 }, { unique: true });
        await members.createIndex({ projectId: 1, userId: 1 }, { unique: true });
        await members.createIndex({ orgId: 1, userId: 1 });
      });
    },

    /** A duplicate (orgId, name) throws the driver's 11000 inside a DatabaseError. */
    insert: (p: ProjectRecord) => guard('projects.insert', () => projects.insertOne(p)),

    /** The org's project, or null: another org's project reads as absent. */
    get: (orgId: string, projectId: string) => guard('projects.get', () => projects.findOne({ _id: projectId, orgId })),

    /** By name; `ids` narrows the list to the projects a caller may see. */
    async list(orgId: string, q: { limit: number; offset: number; ids?: string[] }) {
      const filter: Filter<ProjectRecord> = { orgId, ...(q.ids ? { _id: { $in: q.ids } } : {}) };
      const [items, total] = await Promise.all([
        guard('projects.list', () =>
          projects.find(filter).sort({ name: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('projects.count', () => projects.countDocuments(filter)),
      ]);
      return { items, total };
    },

    /**
     * Sets and removes fields (null removes). Each field is written whole, never computed from what was read, so
     * concurrent updates end as one of them, field by field. A name taken meanwhile throws 11000 (DatabaseError).
     */
    async update(orgId: string, projectId: string, change: ProjectChange): Promise<ProjectRecord | null> {
      const set: Record<string, unknown> = { updatedAt: new Date() };
      const unset: Record<string, ''> = {};
      for (const [key, value] of Object.entries(change)) {
        if (value === null) unset[key] = '';
        else if (value !== undefined) set[key] = value;
      }
      const result = await guard('projects.update', () =>
        projects.updateOne(
          { _id: projectId, orgId },
          { $set: set, ...(Object.keys(unset).length ? { $unset: unset } : {}) },
        ),
      );
      if (result.matchedCount === 0) return null;
      return guard('projects.get', () => projects.findOne({ _id: projectId, orgId }));
    },

    /** Removes the project, then its memberships; false when the org has no such project. */
    async remove(orgId: string, projectId: string): Promise<boolean> {
      const result = await guard('projects.remove', () => projects.deleteOne({ _id: projectId, orgId }));
      await guard('projects.removeMembers', () => members.deleteMany({ orgId, projectId }));
      return result.deletedCount === 1;
    },

    /** A duplicate (projectId, userId) throws the driver's 11000 inside a DatabaseError. */
    addMember: (m: Omit<MemberRecord, '_id'>) =>
      guard('projects.addMember', () => members.insertOne({ _id: memberId(m.projectId, m.userId), ...m })),

    listMembers: (orgId: string, projectId: string) =>
      guard('projects.listMembers', () => members.find({ orgId, projectId }).sort({ addedAt: 1, _id: 1 }).toArray()),

    getMember: (orgId: string, projectId: string, userId: string) =>
      guard('projects.getMember', () => members.findOne({ orgId, projectId, userId })),

    /** The user's role in the project, or undefined when not a member (or the project is another org's). */
    async memberRole(orgId: string, projectId: string, userId: string): Promise<ProjectRole | undefined> {
      const m = await guard('projects.memberRole', () =>
        members.findOne({ orgId, projectId, userId }, { projection: { role: 1 } }),
      );
      return m?.role;
    },

    /** The IDs of the projects the user is a member of. */
    async projectIdsOf(orgId: string, userId: string): Promise<string[]> {
      const ms = await guard('projects.projectIdsOf', () =>
        members.find({ orgId, userId }, { projection: { projectId: 1 } }).toArray(),
      );
      return ms.map((m) => m.projectId);
    },

    /** Writes the role whole (not computed from a read); false when there is no such member. */
    async setRole(orgId: string, projectId: string, userId: string, role: ProjectRole): Promise<boolean> {
      const result = await guard('projects.setRole', () =>
        members.updateOne({ orgId, projectId, userId }, { $set: { role } }),
      );
      return result.matchedCount === 1;
    },

    async removeMember(orgId: string, projectId: string, userId: string): Promise<boolean> {
      const result = await guard('projects.removeMember', () => members.deleteOne({ orgId, projectId, userId }));
      return result.deletedCount === 1;
    },
  };
}

export type ProjectStore = ReturnType<typeof createProjectStore>;
