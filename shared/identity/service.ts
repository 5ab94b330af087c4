import { randomUUID } from 'node:crypto';

import { AppError } from '../errors';
import { type OrgRole, type Permission, PERMISSIONS } from '../permissions';
import type { PrincipalCache } from './principal-cache';
import { SESSION_TOKEN_NAME } from './sessions';
import type { IdentityStore, OrgRecord, Plan, TokenRecord, UserRecord } from './store';
import { generateToken, hashToken, TOKEN_PATTERN } from './tokens';

export interface Principal {
  org: OrgRecord;
  user: UserRecord;
  token: Pick<TokenRecord, '_id' | 'name' | 'scopes' | 'expiresAt' | 'sessionOf'>;
}

const DEFAULT_TOKEN_TTL_S = 90 * 24 * 3600;
/** lastUsedAt is advisory; writing it at most once a minute keeps reads from becoming writes. */
const TOUCH_EVERY_MS = 60_000;

const expired = (at: Date) =>
  new AppError('TOKEN_EXPIRED', `The access token expired at ${at.toISOString()}; issue a new one.`);

export interface IdentityDeps {
  store: IdentityStore;
  /** Principals kept in this process (the api's): authenticate reads the database only on a miss. */
  cache?: PrincipalCache<Principal>;
  /**
   * Tells every api process that a principal changed (shared/identity/principal-cache.ts); the cache's own by default,
   * which also forgets this process's principals at once. Without either, this service cannot revoke or change roles.
   */
  announce?: () => Promise<void>;
}

/** A principal of its own per request, so nothing a request does to it reaches the cached one. */
const copyOf = (p: Principal): Principal => ({
  org: { ...p.org },
  user: { ...p.user },
  token: { ...p.token, scopes: [...p.token.scopes] },
});

export function createIdentityService({ store, cache, announce = cache?.announce }: IdentityDeps) {
  /**
   * A write that may change what a principal may do, announced once done. Announced even when it failed or matched
   * nothing, so a caller retrying after a failed announcement announces again.
   */
  async function changing<T>(write: () => Promise<T>): Promise<T> {
    if (!announce) throw new Error('identity changes need an announcer (createIdentityService({ announce }))');
    try {
      return await write();
    } finally {
      await announce();
    }
  }

  /** The database's answer for a token hash; every refusal comes from here, never from the cache. */
  async function load(hash: string, now: Date): Promise<Principal> {
    const token = await store.findTokenByHash(hash);
    if (!token || token.revokedAt)
      throw new AppError('INVALID_TOKEN', 'The access token is unknown or has been revoked.');
    if (token.expiresAt <= now) throw expired(token.expiresAt);
    if (token.sessionOf) {
      // A console session ends with the token it was exchanged for: revoking that token signs its sessions out.
      const parent = await store.getToken(token.orgId, token.sessionOf);
      if (!parent || parent.revokedAt)
        throw new AppError('INVALID_TOKEN', 'The console session ended: the token it signed in with was revoked.');
    }
    const [org, user] = await Promise.all([store.getOrg(token.orgId), store.getUser(token.orgId, token.userId)]);
    if (!org || !user)
      throw new AppError('INVALID_TOKEN', 'The access token belongs to a user or organisation that no longer exists.');
    if (!token.lastUsedAt || now.getTime() - token.lastUsedAt.getTime() > TOUCH_EVERY_MS)
      await store.touchToken(token._id, now);
    return {
      org,
      user,
      token: {
        _id: token._id,
        name: token.name,
        scopes: token.scopes,
        expiresAt: token.expiresAt,
        ...(token.sessionOf ? { sessionOf: token.sessionOf } : {}),
      },
    };
  }

  async function createToken(input: {
    orgId: string;
    userId: string;
    name: string;
    scopes: Permission[];
    expiresInS?: number;
  }) {
    const token = generateToken();
    const now = new Date();
    const record: TokenRecord = {
      _id: randomUUID(),
      orgId: input.orgId,
      userId: input.userId,
      name: input.name,
      hash: hashToken(token),
      scopes: input.scopes,
      expiresAt: new Date(now.getTime() + (input.expiresInS ?? DEFAULT_TOKEN_TTL_S) * 1000),
      createdAt: now,
    };
    await store.insertToken(record);
    return { id: record._id, token, expiresAt: record.expiresAt };
  }

  /** The one way a user joins an organisation (CLI and /platform/users); a second e-mail in an org throws 11000. */
  async function addUser(input: { orgId: string; email: string; name?: string; role: OrgRole }) {
    const user: UserRecord = {
      _id: randomUUID(),
      orgId: input.orgId,
      email: input.email.toLowerCase(),
      ...(input.name ? { name: input.name } : {}),
      role: input.role,
      createdAt: new Date(),
    };
    await store.insertUser(user);
    return user;
  }

  return {
    createToken,
    addUser,

    /**
     * A console session for the calling token (shared/identity/sessions.ts): the same user and scopes, living `ttlS`
     * or until the token expires, whichever comes first. A session cannot open another.
     */
    async createSession(principal: Principal, ttlS: number) {
      const parent = await store.getToken(principal.org._id, principal.token._id);
      if (!parent || parent.revokedAt)
        throw new AppError('INVALID_TOKEN', 'The access token is unknown or has been revoked.');
      if (parent.sessionOf)
        throw new AppError(
          'INVALID_REQUEST',
          'This is already a console session; sign in with an access token (svc_…) to open a new one.',
        );
      const token = generateToken();
      const now = new Date();
      const expiresAt = new Date(Math.min(now.getTime() + ttlS * 1000, parent.expiresAt.getTime()));
      const record: TokenRecord = {
        _id: randomUUID(),
        orgId: parent.orgId,
        userId: parent.userId,
        name: SESSION_TOKEN_NAME,
        hash: hashToken(token),
        scopes: parent.scopes,
        expiresAt,
        createdAt: now,
        sessionOf: parent._id,
      };
      await store.insertToken(record);
      return { id: record._id, secret: token, expiresAt };
    },

    /** An organisation, its owner and an owner token with every scope: the operator's first step. */
    async bootstrap(input: { orgName: string; plan: Plan; ownerEmail?: string; expiresInS?: number }) {
      const org: OrgRecord = { _id: randomUUID(), name: input.orgName, plan: input.plan, createdAt: new Date() };
      await store.insertOrg(org);
      const user = await addUser({
        orgId: org._id,
        email: input.ownerEmail ?? `owner@${org._id}.invalid`,
        role: 'owner',
      });
      const token = await createToken({
        orgId: org._id,
        userId: user._id,
        name: 'bootstrap',
        scopes: [...PERMISSIONS],
        expiresInS: input.expiresInS,
      });
      return { orgId: org._id, userId: user._id, tokenId: token.id, token: token.token, expiresAt: token.expiresAt };
    },

    revokeToken: (id: string, orgId?: string) => changing(() => store.revokeToken(id, orgId)),
    getToken: (orgId: string, id: string) => store.getToken(orgId, id),
    listTokens: (orgId: string, userId: string) => store.listTokens(orgId, userId),
    orgExists: async (orgId: string) => (await store.getOrg(orgId)) !== null,
    userExists: async (orgId: string, userId: string) => (await store.getUser(orgId, userId)) !== null,
    listUsers: (orgId: string, ids?: string[]) => store.listUsers(orgId, ids),
    /** The organisation's name as principals carry it (announced, so cached principals show the new one). */
    renameOrg: (orgId: string, name: string) => changing(() => store.renameOrg(orgId, name)),
    setUserRole: (orgId: string, userId: string, role: OrgRole) =>
      changing(() => store.setUserRole(orgId, userId, role)),

    /**
     * Resolves a bearer token to its principal, or throws INVALID_TOKEN / TOKEN_EXPIRED. Kept principals are checked
     * for expiry on every call; revocations and role changes reach them through the cache's announcements.
     */
    async authenticate(presented: string | undefined, now = new Date()): Promise<Principal> {
      if (!presented || !TOKEN_PATTERN.test(presented)) {
        throw new AppError('INVALID_TOKEN', 'Missing or malformed access token: send "Authorization: Bearer svc_…".');
      }
      // Keyed by the hash, as the database is: the presented secret is not kept.
      const hash = hashToken(presented);
      const principal = cache ? await cache.resolve(hash, () => load(hash, now)) : await load(hash, now);
      if (principal.token.expiresAt <= now) throw expired(principal.token.expiresAt);
      return copyOf(principal);
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
