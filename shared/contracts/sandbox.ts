/**
 * The sandbox workflow's contract: what the api (and the builder turn's activity) need to drive a session's sandbox
 * workflow (its name, ID, input and update), no workflow code (docs/architecture.md, "Layers and where code goes").
 * The client call both make is shared/builder/sandbox-sync.ts.
 */
import { defineUpdate } from '@temporalio/workflow';

import type { SyncAction } from '../builder/sandbox-store';

/** The exported function's name in workflows/sandbox/workflow.ts. */
export const SANDBOX_WORKFLOW = 'sandboxWorkflow';

/** One per session, named by the design (docs/architecture.md, "AI builder"). */
export const sandboxWorkflowId = (sessionId: string) => `sandbox/${sessionId}`;

export interface SandboxInput {
  sessionId: string;
  orgId: string;
  /** A sandbox no sync asked for in this long is stopped (SANDBOX_IDLE_S). */
  idleS: number;
}

/** The head to apply: the workflow applies the highest seq asked for, so many requests cost one sync. */
export interface SyncRequest {
  checkpointId: string | null;
  seq: number;
}

export interface SyncOutcome {
  status: 'running' | 'failed';
  action: SyncAction;
  appliedCheckpointId: string | null;
  /** Files copied into the container, and deleted from it. */
  copied: number;
  deleted: number;
  containerId: string | null;
  error: string | null;
}

/** Answers once a sync that applied this head (or a later one) has ended. */
export const syncUpdate = defineUpdate<SyncOutcome, [SyncRequest]>('sync');
