import type { Managed } from './process';

/** One service of the stack (parts.ts lists them): what a part is given, and what it hands back once running. */
export interface PartContext {
  dataDir: string;
  /** `default` binds the documented ports (npm start); `free` asks the kernel for unused ones (tests). */
  ports: 'default' | 'free';
  /** Tests have no use for the Temporal Web UI. */
  headless: boolean;
  progress: (line: string) => void;
  /** Aborted by Ctrl-C: a tool build or a wait in progress stops. */
  signal?: AbortSignal;
}

export interface PartResult {
  env: Record<string, string>;
  urls?: Record<string, string>;
  started: Managed[];
  /** True when the variable pointed at an existing server and nothing was started. */
  external: boolean;
}

export interface Part {
  name: string;
  start(ctx: PartContext): Promise<PartResult>;
}

/** A part whose variable points at a server that already runs: nothing started, nothing to stop. */
export const EXTERNAL: PartResult = { env: {}, started: [], external: true };
