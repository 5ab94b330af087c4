/** A deployment as the platform API answers it, as far as the CLI reads it (other fields pass through --json). */
export interface DeploymentView {
  id: string;
  name: string;
  status: string;
  source: { type: string; image?: string; repoUrl?: string; branch?: string; uploadId?: string };
  port: number;
  url: string | null;
  envVarNames?: string[];
  createdAt: string;
  events?: StatusEvent[];
  error?: { code: string; phase?: string; message: string; hint?: string; exitCode?: number; lastLines?: string[] };
  revision?: number;
  replicas?: number;
  lastFailure?: {
    phase?: string;
    command?: string;
    revision?: number;
    message: string;
    exitCode?: number;
    lastLines?: string[];
    hint?: string;
    at?: string;
  };
  releases?: { total: number; recent: Release[] };
}

export interface Release {
  revision: number;
  image?: string;
  trigger?: string;
  rollbackOf?: number;
  status?: string;
  createdAt?: string;
  envNames?: string[];
}

export interface StatusEvent {
  status: string;
  message: string;
  at: string;
}

export interface LogLine {
  timestamp: string;
  stream: string;
  message: string;
  /** The instance an app line came from. */
  instance?: string;
}

/** A deploy has ended when its deployment is in one of these. */
export const FINAL = new Set(['running', 'failed', 'stopped']);

/**
 * Log text and event messages come from tenants' containers and builds: escape sequences in them would move the
 * cursor, retitle the terminal or hide lines. Everything but printable text and tabs is dropped before printing.
 */
export function printable(text: string): string {
  return (
    text
      // CSI and OSC sequences whole, then any other control character.
      // eslint-disable-next-line no-control-regex
      .replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)?/g, '')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g, ' ')
  );
}

export const logKey = (l: LogLine) => `${l.timestamp}\u0000${l.stream}\u0000${l.instance ?? ''}\u0000${l.message}`;
