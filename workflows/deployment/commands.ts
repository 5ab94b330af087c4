/**
 * What the api needs to start and command a deployment's workflow, and nothing else: the api imports this file,
 * never the workflow code (DESIGN.md §3).
 */
import { defineSignal } from '@temporalio/workflow';

import type { DeploymentSource } from '../../shared/deployments/types';

export interface DeploymentWorkflowInput {
  deploymentId: string;
  orgId: string;
  source: DeploymentSource;
  port: number;
  /**
   * Names only: values are secrets, kept out of history (Temporal's store, its UI) and read from the sealed
   * record by the activity that starts the container.
   */
  envNames?: string[];
  /** Inputs of workflows started before values were passed by reference carry them here; they still deploy. */
  envVars?: Record<string, string>;
  revision: number;
  limits: { memoryMb: number; cpus: number; pids: number };
  readyTimeoutS: number;
  /** Fetch, extract and build together may take this long (source deployments). */
  buildTimeoutS?: number;
  /** Version of the record the api wrote (the `queued` one); every later write counts up from here. */
  version: number;
}

/**
 * Sent by the api (with signalWithStart, so a workflow not yet started starts straight into its destroy) after it
 * has written the destroy intent and hidden the record; and by the reconciler for a destroy the api left half done.
 */
export const destroySignal = defineSignal('destroy');
