import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { OrgRole, Permission } from '../permissions';

export const PLANS = ['free', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface OrgRecord {
  _id: string;
  name: string;
  plan: Plan;
  createdAt: Date;
}

export interface UserRecord {
  _id: string;
  orgId: string;
  email: string;
  /** How people call them; optional (the CLI adds users by e-mail only). */
  name?: string;
  role: OrgRole;
  createdAt: Date;
}

/** An access token; only the SHA-256 of its secret is stored. */
export interface TokenRecord {
  _id: string;
  orgId: string;
  userId: string;
  name: string;
  hash: string;
  scopes: Permission[];
  expiresAt: Date;
  revokedAt?: Date;
  lastUsedAt?: Date;
  createdAt: Date;
  /**
   * A web console session: the token it was exchanged for (shared/identity/sessions.ts). It lives no longer than that
   * token and dies with it; it is kept out of the token list, since it is the console's, not a credential to hand on.
   */
  sessionOf?: string;
}

export function createIdentityStore(db: Db) {
  const orgs = db.collection<OrgRecord>('orgs');
  const users = db.collection<UserRecord>('users');
  const tokens = db.collection<TokenRecord>('tokens');
  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('identity.createIndexes', async () => {
        await tokens.createIndex({ hash: 1 }, { unique: true });
        await tokens.createIndex({ orgId: 1, userId: 1 });
        await users.createIndex({ orgId: 1, email: 1 }, { unique: true });
      });
    },
    insertOrg: (org: OrgRecord) => guard('orgs.insert', () => orgs.insertOne(org)),
    getOrg: (id: string) => guard('orgs.get', () => orgs.findOne({ _id: id })),
    /** Writes the name whole (the newest settings version's), never computed from a read of this record. */
    renameOrg: (id: string, name: string) =>
      guard('orgs.rename', () => orgs.updateOne({ _id: id }, { $set: { name } })),
    insertUser: (user: UserRecord) => guard('users.insert', () => users.insertOne(user)),
    getUser: (orgId: string, id: string) => guard('users.get', () => users.findOne({ _id: id, orgId })),
    /** The org's users by e-mail, or those of `ids` (another org's IDs match nothing). */
    listUsers: (orgId: string, ids?: string[]) =>
      guard('users.list', () =>
        users
          .find({ orgId, ...(ids ? { _id: { $in: ids } } : {}) })
          .sort({ email: 1 })
          .limit(1000)
          .toArray(),
      ),
    /** Writes the role whole (not computed from a read); false when the org has no such user. */
    async setUserRole(orgId: string, id: string, role: OrgRole): Promise<boolean> {
      const res = await guard('users.setRole', () => users.updateOne({ _id: id, orgId }, { $set: { role } }));
      return res.matchedCount === 1;
    },
    insertToken: (token: TokenRecord) => guard('tokens.insert', () => tokens.insertOne(token)),
    getToken: (orgId: string, id: string) => guard('tokens.get', () => tokens.findOne({ _id: id, orgId })),
    listTokens: (orgId: string, userId: string) =>
      guard('tokens.list', () =>
        tokens
          .find({ orgId, userId, sessionOf: { $exists: false } })
          .sort({ createdAt: -1 })
          .limit(500)
          .toArray(),
      ),
    findTokenByHash: (hash: string) => guard('tokens.findByHash', () => tokens.findOne({ hash })),
    async revokeToken(id: string, orgId?: string): Promise<boolean> {
      const filter = orgId ? { _id: id, orgId } : { _id: id };
      const res = await guard('tokens.revoke', () =>
        tokens.updateOne({ ...filter, revokedAt: { $exists: false } }, { $set: { revokedAt: new Date() } }),
      );
      return res.matchedCount === 1;
    },
    touchToken: (id: string, at: Date) =>
      guard('tokens.touch', () => tokens.updateOne({ _id: id }, { $set: { lastUsedAt: at } })),
  };
}

export type IdentityStore = ReturnType<typeof createIdentityStore>;
