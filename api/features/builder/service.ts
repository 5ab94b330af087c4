import { randomBytes, randomUUID } from 'node:crypto';

import type { AiProviders } from '../../../shared/ai-providers/providers';
import type { AiProviderSummary } from '../../../shared/ai-providers/types';
import { type BlobStore, checkManifest, fromManifest, sameManifest, toManifest } from '../../../shared/builder/files';
import type { BuilderStore } from '../../../shared/builder/store';
import type { CheckpointRecord, Session, ShareAccess, ShareRecord } from '../../../shared/builder/types';
import { AppError } from '../../../shared/errors';
import type { Principal } from '../../../shared/identity/service';
import type { BuilderAccess } from './access';

/** A change of one file in a save: its new content, or its deletion. */
export type FileChange =
  { path: string; content: string; encoding: 'utf8' | 'base64' } | { path: string; delete: true };

/** How often a change made against "whatever the head is" re-reads a head that moved under it before giving up. */
const HEAD_RACE_ATTEMPTS = 8;

export const shareNotFound = (slug: string) =>
  new AppError('SHARE_NOT_FOUND', `No share ${slug} in this organisation, or it was revoked or has expired.`, { slug });

const checkpointNotFound = (id: string) =>
  new AppError('CHECKPOINT_NOT_FOUND', `No checkpoint ${id} in this session; GET the session for its checkpoints.`, {
    checkpointId: id,
  });

export const staleHead = (expected: string | null, head: CheckpointRecord | undefined) =>
  new AppError(
    'CONFLICT',
    `The session's head is ${head?._id ?? 'empty'}, not ${expected ?? 'empty'}: someone changed it since you read it. GET the session, then retry against its head.`,
    { expectedHead: expected, head: head?._id ?? null },
  );

/**
 * Sessions, files, checkpoints, revert, providers and shares of the AI builder (docs/architecture.md, "AI builder").
 * Every head move is an insert of the next checkpoint (store.appendCheckpoint): with expectedHead a lost race is 409,
 * without it the change is re-applied to the new head, so no concurrent save is ever lost.
 */
export function createBuilderService(deps: {
  store: BuilderStore;
  blobs: BlobStore;
  access: BuilderAccess;
  aiProviders: Pick<AiProviders, 'get' | 'list'>;
  /** The sandbox engineer's status of a session's preview, when a sandbox feature is composed. */
  sandboxOf?: (session: Session) => Promise<Record<string, unknown> | null>;
}) {
  const { store, access } = deps;

  const load = async (p: Principal, id: string, need: 'read' | 'write') =>
    access.session(p, await store.getSession(p.org._id, id), id, need);

  /**
   * Moves the head with `next(head)` (the new files, or undefined for "nothing changes"): the compare-and-set of
   * store.appendCheckpoint, retried on a moved head only when the caller did not name the head it expects.
   */
  async function moveHead(
    s: Session,
    expectedHead: string | null | undefined,
    make: (
      head: CheckpointRecord | undefined,
    ) => Omit<Parameters<BuilderStore['appendCheckpoint']>[1], 'sessionId' | 'orgId'> | undefined,
  ): Promise<{ checkpoint: CheckpointRecord; created: boolean }> {
    let head = s.head;
    for (let attempt = 1; ; attempt++) {
      if (expectedHead !== undefined && (head?._id ?? null) !== expectedHead) throw staleHead(expectedHead, head);
      const change = make(head);
      if (!change) {
        if (!head)
          throw new AppError('INVALID_REQUEST', 'Nothing to save: the session has no files and the change adds none.');
        return { checkpoint: head, created: false };
      }
      const made = await store.appendCheckpoint(head, { ...change, sessionId: s._id, orgId: s.orgId });
      if (made) return { checkpoint: made, created: true };
      if (attempt >= HEAD_RACE_ATTEMPTS)
        throw new AppError('CONFLICT', 'The session kept changing while saving; retry in a moment.', {});
      head = await store.head(s._id);
    }
  }

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

  async function providerFor(orgId: string, providerId: string): Promise<AiProviderSummary> {
    const provider = await deps.aiProviders.get(orgId, providerId);
    if (!provider)
      throw new AppError(
        'AI_PROVIDER_NOT_FOUND',
        `No AI provider ${providerId} in this organisation; see GET /builder/providers.`,
        {
          providerId,
        },
      );
    if (!provider.enabled)
      throw new AppError(
        'INVALID_REQUEST',
        `The AI provider ${provider.name} is disabled; choose an enabled one (GET /builder/providers).`,
        {
          providerId,
        },
      );
    return provider;
  }

  function checkModel(provider: AiProviderSummary, model: string) {
    const allowed = [provider.defaultModel, ...(provider.models ?? [])];
    if (!allowed.includes(model))
      throw new AppError(
        'INVALID_REQUEST',
        `The provider ${provider.name} offers ${allowed.join(', ')}, not ${model}.`,
        {
          model,
          allowed,
        },
      );
  }

  async function newSession(
    p: Principal,
    input: { projectId: string; title?: string; providerId?: string; model?: string },
  ) {
    if (input.providerId) {
      const provider = await providerFor(p.org._id, input.providerId);
      if (input.model) checkModel(provider, input.model);
    } else if (input.model) {
      throw new AppError('INVALID_REQUEST', 'A model is chosen with its provider: name providerId too.', {});
    }
    const _id = randomUUID();
    return {
      _id,
      orgId: p.org._id,
      projectId: input.projectId,
      title: input.title ?? 'Untitled app',
      ...(input.providerId ? { providerId: input.providerId } : {}),
      ...(input.model ? { model: input.model } : {}),
      createdAt: new Date(),
      createdBy: p.user._id,
    };
  }

  return {
    load,

    /** Refuses a project the caller may not use so: 404 when it cannot see it (as an unknown ID), 403 when it reads. */
    project: (p: Principal, projectId: string, need: 'read' | 'write') => access.project(p, projectId, need),

    message: (sessionId: string, id: string) => store.getMessage(sessionId, id),
    checkpoint: (s: Session, id: string) => store.getCheckpoint(s.orgId, s._id, id),

    async get(p: Principal, id: string) {
      const s = await load(p, id, 'read');
      const [checkpoints, messages, running, sandbox] = await Promise.all([
        store.recentCheckpoints(s._id, 20),
        store.listMessages(s._id, 200),
        store.runningTurn(s._id),
        deps.sandboxOf?.(s) ?? null,
      ]);
      return { session: s, checkpoints, messages, running, sandbox };
    },

    async create(p: Principal, input: { projectId: string; title?: string; providerId?: string; model?: string }) {
      await access.project(p, input.projectId, 'write');
      const record = await newSession(p, input);
      await store.insertSession({ ...record, defaultKey: record._id });
      return record._id;
    },

    /** The project's default session, made on first call (a viewer may read one, not make one). */
    async projectSession(p: Principal, projectId: string, title?: string): Promise<string> {
      await access.project(p, projectId, 'read');
      const existing = await store.findDefaultSession(p.org._id, projectId);
      if (existing) return existing._id;
      await access.project(p, projectId, 'write');
      const { session } = await store.defaultSession(await newSession(p, { projectId, ...(title ? { title } : {}) }));
      return session._id;
    },

    async saveFiles(p: Principal, id: string, input: { files: FileChange[]; expectedHead?: string | null }) {
      const s = await load(p, id, 'write');
      // Contents go to S3 first: write-once by digest, so a save that then loses its head race leaves nothing wrong.
      const written = await Promise.all(
        input.files.map(async (f) =>
          'delete' in f
            ? { path: f.path, entry: null }
            : { path: f.path, entry: await deps.blobs.put(s.orgId, Buffer.from(f.content, f.encoding)) },
        ),
      );
      return moveHead(s, input.expectedHead, (head) => {
        const before = toManifest(head?.files ?? []);
        const after = { ...before };
        for (const w of written) {
          if (w.entry) after[w.path] = w.entry;
          else delete after[w.path];
        }
        if (head && sameManifest(before, after)) return undefined;
        checkManifest(after);
        return { files: fromManifest(after), createdBy: p.user._id, reason: 'save' };
      });
    },

    async revert(p: Principal, id: string, input: { checkpointId: string; expectedHead?: string | null }) {
      const s = await load(p, id, 'write');
      const running = await store.runningTurn(s._id);
      if (running)
        throw new AppError(
          'CONFLICT',
          `A turn (${running.turnId}) is running in this session; revert once it has ended.`,
          {
            turnId: running.turnId,
          },
        );
      const target = await store.getCheckpoint(s.orgId, s._id, input.checkpointId);
      if (!target) throw checkpointNotFound(input.checkpointId);
      // Always a new checkpoint, even when the head already has the target's files: history records the revert.
      const result = await moveHead(s, input.expectedHead, () => ({
        files: target.files,
        createdBy: p.user._id,
        reason: 'revert',
        source: target._id,
      }));
      // Messages written after the target are marked, never deleted: the chat shows what was undone.
      await store.markReverted(s._id, target.seq);
      return result.checkpoint;
    },

    async setModel(p: Principal, id: string, model: string) {
      const s = await load(p, id, 'write');
      const providerId = s.providerId ?? (await deps.aiProviders.list(s.orgId, { enabledOnly: true }))[0]?._id;
      if (!providerId)
        throw new AppError('INVALID_REQUEST', 'Choose a provider first (PUT /builder/sessions/{id}/provider).', {});
      checkModel(await providerFor(s.orgId, providerId), model);
      await store.setSessionFields(s.orgId, s._id, { providerId, model });
    },

    async setProvider(p: Principal, id: string, input: { providerId: string; model?: string }) {
      const s = await load(p, id, 'write');
      const provider = await providerFor(s.orgId, input.providerId);
      const model = input.model ?? provider.defaultModel;
      checkModel(provider, model);
      await store.setSessionFields(s.orgId, s._id, { providerId: provider._id, model });
    },

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
      const record = await newSession(p, {
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

export type BuilderService = ReturnType<typeof createBuilderService>;
