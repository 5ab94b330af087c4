import { randomBytes } from 'node:crypto';

import type { BuilderStore } from '@shared/builder/store';
import type { Session, SessionRecord, ShareAccess, ShareRecord } from '@shared/builder/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import type { BuilderAccess } from './access';

const shareNotFound = (slug: string) =>
  new AppError('SHARE_NOT_FOUND', `No share ${slug} in this organisation, or it was revoked or has expired.`, { slug });

/** The record of a new session of the caller's, as `create` makes one: a remix inserts one. */
type NewSession = (
  p: Principal,
  input: { projectId: string; title?: string },
) => Promise<Omit<SessionRecord, 'defaultKey'>>;

/**
 * Shares of a session: a link pinned to one checkpoint (its slug the only secret), read by anyone of the organisation
 * who holds it, and remixed into a new session of the caller's when the share allows.
 */
export function createShareService(deps: {
  store: BuilderStore;
  access: BuilderAccess;
  load: (p: Principal, id: string, need: 'read' | 'write') => Promise<Session>;
  newSession: NewSession;
}) {
  const { store, access, load } = deps;

  /** A live share and its pinned checkpoint; anyone of the org holding the slug may read it. */
  async function shared(p: Principal, slug: string) {
    const share = await store.liveShare(p.org._id, slug);
    if (!share) throw shareNotFound(slug);
    const [session, checkpoint] = await Promise.all([
      store.getSession(share.orgId, share.sessionId),
      store.getCheckpoint(share.orgId, share.sessionId, share.checkpointId),
    ]);
    if (!session || !checkpoint) throw shareNotFound(slug);
    return { share, session, checkpoint };
  }

  return {
    async share(p: Principal, id: string, input: { access: ShareAccess; expiresIn?: number }): Promise<ShareRecord> {
      const s = await load(p, id, 'write');
      if (!s.head) throw new AppError('INVALID_REQUEST', 'The session has no files to share yet; save some first.', {});
      const now = new Date();
      const share: ShareRecord = {
        // 144 random bits: the slug is the link's only secret.
        _id: randomBytes(18).toString('base64url'),
        sessionId: s._id,
        orgId: s.orgId,
        checkpointId: s.head._id,
        access: input.access,
        createdAt: now,
        createdBy: p.user._id,
        ...(input.expiresIn ? { expiresAt: new Date(now.getTime() + input.expiresIn * 1000) } : {}),
      };
      await store.insertShare(share);
      return share;
    },

    shared,

    async revokeShare(p: Principal, slug: string): Promise<void> {
      const share = await store.liveShare(p.org._id, slug);
      if (!share) throw shareNotFound(slug);
      const s = await store.getSession(share.orgId, share.sessionId);
      await access.session(p, s, share.sessionId, 'write').catch((err: unknown) => {
        // A session the caller cannot see reads as no share at all; one it may only read is the plain 403.
        if (err instanceof AppError && err.code !== 'SESSION_NOT_FOUND') throw err;
        throw shareNotFound(slug);
      });
      if (!(await store.revokeShare(p.org._id, slug))) throw shareNotFound(slug);
    },

    /** A new session in the caller's project holding the share's files; the shared session is not touched. */
    async remix(p: Principal, slug: string, input: { projectId: string; title?: string }) {
      const { share, session, checkpoint } = await shared(p, slug);
      if (share.access !== 'remix')
        throw new AppError('INSUFFICIENT_SCOPE', 'This share is view-only; ask its owner for a remix link.', { slug });
      await access.project(p, input.projectId, 'write');
      const record = await deps.newSession(p, {
        projectId: input.projectId,
        title: input.title ?? `Remix of ${session.title}`,
      });
      await store.insertSession({
        ...record,
        defaultKey: record._id,
        remixedFrom: { sessionId: session._id, checkpointId: checkpoint._id, slug },
      });
      await store.appendCheckpoint(undefined, {
        sessionId: record._id,
        orgId: record.orgId,
        files: checkpoint.files,
        createdBy: p.user._id,
        reason: 'remix',
        source: checkpoint._id,
      });
      return record._id;
    },
  };
}
