import type { Db } from 'mongodb';

import { guard } from '../db/mongo';

/**
 * A session's Git binding (docs/architecture.md, "AI builder"): the remote and branch it was imported from or last
 * pushed to, and the commit it left there. One writer per session at a time: the session's Git workflow
 * (builder-git/<sessionId>), whose ID Temporal lets run once at a time; the import writes it before its session is
 * visible.
 */
export interface GitBindingRecord {
  /** The session's ID. */
  _id: string;
  orgId: string;
  remoteUrl: string;
  /** null: the remote's default branch, as imported. */
  branch: string | null;
  /** The commit the remote branch had when we last wrote or read it: a push whose remote moved on is refused. */
  lastCommit: string;
  /** The checkpoint whose files that commit holds. */
  checkpointId: string;
  at: Date;
  tokenSecretId?: string;
  via: 'import' | 'push';
}

export function createGitBindingStore(db: Db) {
  const bindings = db.collection<GitBindingRecord>('builder_git');
  return {
    get: async (orgId: string, sessionId: string) =>
      (await guard('builderGit.get', () => bindings.findOne({ _id: sessionId, orgId }))) ?? undefined,
    /** The whole binding, written at once. */
    put: (b: GitBindingRecord) =>
      guard('builderGit.put', () => bindings.replaceOne({ _id: b._id }, b, { upsert: true })),
  };
}

export type GitBindingStore = ReturnType<typeof createGitBindingStore>;
