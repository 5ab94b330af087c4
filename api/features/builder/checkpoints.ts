import type { BlobStore } from '@shared/builder/files';
import { checkManifest, fromManifest, sameManifest, toManifest } from '@shared/builder/files';
import type { BuilderStore } from '@shared/builder/store';
import type { CheckpointRecord, Session } from '@shared/builder/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

/** A change of one file in a save: its new content, or its deletion. */
export type FileChange =
  { path: string; content: string; encoding: 'utf8' | 'base64' } | { path: string; delete: true };

/** How often a change made against "whatever the head is" re-reads a head that moved under it before giving up. */
const HEAD_RACE_ATTEMPTS = 8;

const checkpointNotFound = (id: string) =>
  new AppError('CHECKPOINT_NOT_FOUND', `No checkpoint ${id} in this session; GET the session for its checkpoints.`, {
    checkpointId: id,
  });

const staleHead = (expected: string | null, head: CheckpointRecord | undefined) =>
  new AppError(
    'CONFLICT',
    `The session's head is ${head?._id ?? 'empty'}, not ${expected ?? 'empty'}: someone changed it since you read it. GET the session, then retry against its head.`,
    { expectedHead: expected, head: head?._id ?? null },
  );

/**
 * A session's files move only by a new checkpoint: a save or a revert. Every head move is an insert of the next
 * checkpoint (store.appendCheckpoint): with expectedHead a lost race is 409, without it the change is re-applied to
 * the new head, so no concurrent save is ever lost.
 */
export function createCheckpointService(deps: {
  store: BuilderStore;
  blobs: BlobStore;
  load: (p: Principal, id: string, need: 'read' | 'write') => Promise<Session>;
}) {
  const { store, load } = deps;

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

  return {
    checkpoint: (s: Session, id: string) => store.getCheckpoint(s.orgId, s._id, id),

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
  };
}
