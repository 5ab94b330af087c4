import { randomUUID } from 'node:crypto';

import type { AiProviders } from '@shared/ai-providers/providers';
import type { BlobStore } from '@shared/builder/files';
import type { BuilderStore } from '@shared/builder/store';
import type { Session, SessionRecord } from '@shared/builder/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import type { BuilderAccess } from './access';
import { createCheckpointService } from './checkpoints';
import { checkModel, providerFor } from './provider-choice';
import { createShareService } from './shares';

/**
 * Sessions of the AI builder (docs/architecture.md, "AI builder"): making and reading them and choosing their provider
 * and model here; their files and checkpoints (checkpoints.ts) and shares (shares.ts) beside.
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

  async function newSession(
    p: Principal,
    input: { projectId: string; title?: string; providerId?: string; model?: string },
  ): Promise<Omit<SessionRecord, 'defaultKey'>> {
    if (input.providerId) {
      const provider = await providerFor(deps.aiProviders, p.org._id, input.providerId);
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

    /** The project's sessions, newest first; the caller must be able to read the project. */
    async list(p: Principal, projectId: string, limit: number) {
      await access.project(p, projectId, 'read');
      return store.listSessions(p.org._id, projectId, limit);
    },

    /** One file of the head (or of `checkpointId`): its bytes, as text when they are UTF-8, else base64. */
    async readFile(p: Principal, id: string, path: string, checkpointId?: string) {
      const s = await load(p, id, 'read');
      const at = checkpointId ? await store.getCheckpoint(s.orgId, s._id, checkpointId) : s.head;
      if (checkpointId && !at)
        throw new AppError(
          'CHECKPOINT_NOT_FOUND',
          `No checkpoint ${checkpointId} in this session; GET the session for its checkpoints.`,
          { checkpointId },
        );
      const entry = at?.files.find((f) => f.path === path);
      if (!at || !entry)
        throw new AppError(
          'FILE_NOT_FOUND',
          `No file ${path} in ${checkpointId ? `checkpoint ${checkpointId}` : "the session's head"}; GET the session for its files.`,
          { path },
        );
      const bytes = await deps.blobs.get(s.orgId, entry.sha256);
      const text = new TextDecoder('utf-8', { fatal: true });
      let content: string;
      let encoding: 'utf8' | 'base64' = 'utf8';
      try {
        content = text.decode(bytes);
      } catch {
        // Not UTF-8 (an image, a font): sent as base64, as a save takes it back.
        content = bytes.toString('base64');
        encoding = 'base64';
      }
      return { path, sha256: entry.sha256, size: entry.size, checkpointId: at._id, encoding, content };
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

    async setModel(p: Principal, id: string, model: string) {
      const s = await load(p, id, 'write');
      const providerId = s.providerId ?? (await deps.aiProviders.list(s.orgId, { enabledOnly: true }))[0]?._id;
      if (!providerId)
        throw new AppError('INVALID_REQUEST', 'Choose a provider first (PUT /builder/sessions/{id}/provider).', {});
      checkModel(await providerFor(deps.aiProviders, s.orgId, providerId), model);
      await store.setSessionFields(s.orgId, s._id, { providerId, model });
    },

    async setProvider(p: Principal, id: string, input: { providerId: string; model?: string }) {
      const s = await load(p, id, 'write');
      const provider = await providerFor(deps.aiProviders, s.orgId, input.providerId);
      const model = input.model ?? provider.defaultModel;
      checkModel(provider, model);
      await store.setSessionFields(s.orgId, s._id, { providerId: provider._id, model });
    },

    ...createCheckpointService({ store, blobs: deps.blobs, load }),
    ...createShareService({ store, access, load, newSession }),
  };
}

export type BuilderService = ReturnType<typeof createBuilderService>;
