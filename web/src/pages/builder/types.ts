/** The builder routes' answers as the page reads them (api/features/builder/schemas.ts is their source). */

export interface FileEntry {
  path: string;
  sha256: string;
  size: number;
}

export interface Checkpoint {
  id: string;
  seq: number;
  parent: string | null;
  reason: 'save' | 'turn' | 'revert' | 'remix' | 'import';
  source: string | null;
  messageId: string | null;
  createdAt: string;
  fileCount: number;
  bytes: number;
}

export interface Message {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string;
  turnId: string | null;
  checkpointId: string | null;
  reverted: boolean;
  error: { code: string; message: string } | null;
}

export interface Sandbox {
  runtime: 'node' | 'static' | 'python';
  status: string;
  previewUrl: string;
  appliedCheckpointId: string | null;
  headCheckpointId: string | null;
  inSync: boolean;
  lastAction: string | null;
  error: string | null;
}

export interface Session {
  id: string;
  projectId: string;
  title: string;
  providerId: string | null;
  model: string | null;
  isDefault: boolean;
  remixedFrom: { sessionId: string; checkpointId: string; slug: string } | null;
  createdAt: string;
  head: (Checkpoint & { files: FileEntry[] }) | null;
  checkpoints: Checkpoint[];
  messages: Message[];
  runningTurn: { turnId: string; startedAt: string } | null;
  sandbox: Sandbox | null;
}

export type SessionSummary = Pick<
  Session,
  'id' | 'projectId' | 'title' | 'providerId' | 'model' | 'isDefault' | 'remixedFrom' | 'createdAt'
>;

export interface Provider {
  id: string;
  name: string;
  kind: string;
  defaultModel: string;
  models: string[];
}

export interface Share {
  slug: string;
  sessionId: string;
  checkpointId: string;
  access: 'view' | 'remix';
  createdAt: string;
  expiresAt: string | null;
}

export interface FileContent {
  path: string;
  sha256: string;
  size: number;
  checkpointId: string;
  encoding: 'utf8' | 'base64';
  content: string;
}

export interface Project {
  id: string;
  name: string;
}

export const sessionPath = (id: string) => `/platform/builder/sessions/${encodeURIComponent(id)}`;
