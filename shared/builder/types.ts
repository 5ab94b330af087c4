/**
 * The AI builder's records (docs/architecture.md, "AI builder"). What must hold under concurrency rests on unique
 * indexes and immutable inserts, never on an update that reads first (FerretDB has no atomic read-modify-write,
 * shared/db/mongo.ts):
 * - the head of a session is its checkpoint of highest `seq`; a checkpoint is inserted with seq = parent.seq + 1
 * under a unique (sessionId, seq) index, so two writers that started from the same head cannot both win;
 * - one default session per project: a unique (projectId, defaultKey) index;
 * - one running turn per session: a marker whose _id is the session's;
 * - turn events: unique (turnId, seq).
 */

/** Caps of the builder's files, in one place: the store checks them and the OpenAPI document states them. */
export const BUILDER_LIMITS = {
  /** Bytes of one file's content. */
  maxFileBytes: 512 * 1024,
  /** Bytes of all files of one checkpoint. */
  maxSessionBytes: 20 * 1024 * 1024,
  /** Files in one checkpoint. */
  maxFiles: 1000,
  /** Characters of a path; each segment at most 255 bytes. */
  maxPathLength: 512,
  /** Files named in one save request (whose JSON body is also capped at 1 MB by the api). */
  maxFilesPerSave: 200,
  /** Characters of one chat message. */
  maxMessageChars: 32 * 1024,
} as const;

export const CHECKPOINT_REASONS = ['save', 'turn', 'revert', 'remix', 'import'] as const;
export type CheckpointReason = (typeof CHECKPOINT_REASONS)[number];

export interface SessionRecord {
  _id: string;
  orgId: string;
  projectId: string;
  title: string;
  providerId?: string;
  model?: string;
  createdAt: Date;
  createdBy: string;
  /**
   * 'default' on the project's default session, the session's own _id on others: the unique (projectId, defaultKey)
   * index allows one default per project (always present, since a missing field indexes as null, and FerretDB has no
   * partial indexes).
   */
  defaultKey: string;
  /** The share and checkpoint a remix copied. */
  remixedFrom?: { sessionId: string; checkpointId: string; slug: string };
}

/** A session as read: its record and its head, the checkpoint of highest seq (undefined before the first). */
export interface Session extends SessionRecord {
  head: CheckpointRecord | undefined;
}

export const DEFAULT_SESSION_KEY = 'default';

export interface FileEntry {
  sha256: string;
  size: number;
}

/** path → content address; paths are validated (files.ts) before a manifest is ever built. */
export type Manifest = Record<string, FileEntry>;

/** An immutable manifest of a session's files. */
export interface CheckpointRecord {
  _id: string;
  sessionId: string;
  orgId: string;
  /** 1 for a session's first checkpoint; parent.seq + 1 after (unique per session: the compare-and-set). */
  seq: number;
  parent?: string;
  /** Paths as keys would put dots into field names; an array keeps any valid path storable. */
  files: { path: string; sha256: string; size: number }[];
  createdAt: Date;
  createdBy: string;
  reason: CheckpointReason;
  /** The assistant message of the turn that made it. */
  messageId?: string;
  /** revert: the checkpoint it restores; remix: the checkpoint it copies (of another session). */
  source?: string;
}

export const MESSAGE_ROLES = ['user', 'assistant'] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

export interface MessageRecord {
  _id: string;
  sessionId: string;
  orgId: string;
  role: MessageRole;
  content: string;
  createdAt: Date;
  /** seq of the head when the message was written: a revert to seq k marks every message with baseSeq ≥ k. */
  baseSeq: number;
  /** The checkpoint the assistant's turn ended with. */
  checkpointId?: string;
  turnId?: string;
  /** Set by a revert to an earlier checkpoint; reverted messages are kept and shown, never deleted. */
  reverted?: true;
  /** The typed error a turn ended with (rate_limited, provider_auth, …). */
  error?: { code: string; message: string };
}

export const SHARE_ACCESS = ['view', 'remix'] as const;
export type ShareAccess = (typeof SHARE_ACCESS)[number];

export interface ShareRecord {
  /** The random slug. */
  _id: string;
  sessionId: string;
  orgId: string;
  checkpointId: string;
  access: ShareAccess;
  createdAt: Date;
  createdBy: string;
  expiresAt?: Date;
  revokedAt?: Date;
}

export const TURN_EVENT_TYPES = [
  'turn.started',
  'message.delta',
  'file.write',
  'file.delete',
  'file.rename',
  'checkpoint.created',
  'sandbox.synced',
  'error',
  'turn.completed',
] as const;
export type TurnEventType = (typeof TURN_EVENT_TYPES)[number];

/** One stored event of a turn; the SSE stream replays them by seq (its `id:` line). */
export interface TurnEventRecord {
  _id: string;
  turnId: string;
  sessionId: string;
  orgId: string;
  seq: number;
  type: TurnEventType;
  data: Record<string, unknown>;
  at: Date;
}

/** The one running turn of a session: inserted before the turn's workflow starts, removed when it ends. */
export interface RunningTurnRecord {
  /** The session's ID: a second insert fails, so a second turn is refused. */
  _id: string;
  turnId: string;
  orgId: string;
  startedAt: Date;
}
