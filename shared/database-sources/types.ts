import type { Sealed } from '../secrets/box';

/** The dialects a source speaks: `mysql` covers MySQL and MariaDB, which share a wire protocol and most SQL. */
export const SOURCE_ENGINES = ['postgres', 'mysql'] as const;
export type SourceEngine = (typeof SOURCE_ENGINES)[number];

/**
 * How a connection is encrypted: `disable` (plain), `require` (TLS without checking the certificate, as many hosted
 * databases without a public CA need) or `verify` (TLS, the certificate checked against the host name).
 */
export const SOURCE_TLS_MODES = ['disable', 'require', 'verify'] as const;
export type SourceTls = (typeof SOURCE_TLS_MODES)[number];

/** What the source's user may do beyond reading, as the last test found it. */
export interface SourcePrivileges {
  write: boolean;
  ddl: boolean;
  superuser: boolean;
  files: boolean;
}

export interface SourceTestOutcome {
  at: Date;
  ok: boolean;
  serverVersion?: string;
  privileges?: SourcePrivileges;
  error?: string;
}

/**
 * A database the organisation's agents may read through the query and ask routes: an external server (address,
 * user, sealed password) or one of its managed databases by reference (`databaseId`; the credentials stay the
 * database's own, opened where a query connects).
 */
export interface DatabaseSourceRecord {
  _id: string;
  orgId: string;
  projectId: string | null;
  name: string;
  engine: SourceEngine;
  /** Set for a managed database added by reference; host, port, user and password are then its own. */
  databaseId: string | null;
  host: string | null;
  port: number | null;
  database: string | null;
  user: string | null;
  /** Sealed for this source (organisation and ID as associated data); never shown. */
  passwordSealed: Sealed | null;
  tls: SourceTls;
  lastTest: SourceTestOutcome | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

export const QUESTION_STATUSES = ['running', 'answered', 'blocked', 'failed'] as const;
export type QuestionStatus = (typeof QUESTION_STATUSES)[number];

/** A question asked of a source and what came of it: kept per source, written once by the asker, once by the answer. */
export interface SourceQuestionRecord {
  _id: string;
  orgId: string;
  sourceId: string;
  question: string;
  providerId: string;
  model: string;
  status: QuestionStatus;
  sql: string | null;
  explanation: string | null;
  /** The rule a blocked statement broke. */
  rule: string | null;
  error: string | null;
  /**
   * The answer (columns, rows, caps, timing) as JSON text, kept so the history shows what was answered: rows are
   * arrays of arrays, which FerretDB does not store as such.
   */
  resultJson: string | null;
  askedBy: string;
  askedAt: Date;
  answeredAt: Date | null;
}
