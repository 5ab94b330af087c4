import type { DeploymentStatus } from '../../shared/deployments/types';

/** A release as the workflow remembers it: enough to roll back to it without reading the database. */
export interface ReleaseRef {
  revision: number;
  /** The reference as deployed (shown in events) and the image ID that runs. */
  image: string;
  imageId: string;
  /** It became ready once: "rollback to the last healthy release" picks among these. */
  healthy: boolean;
}

/**
 * What a deployment's workflow knows between commands, carried across continue-as-new. Plain JSON: it is the new
 * run's input, so it is in history (no env value ever is).
 */
export interface EntityState {
  status: DeploymentStatus;
  /** The record's version the workflow last wrote. */
  version: number;
  /** The release that serves (running) or would serve once started (stopped); absent if none ever started. */
  current?: ReleaseRef;
  nextRevision: number;
  replicas: number;
  /** Newest first, at most `releasesKept`: their images are kept, so these are the rollback targets. */
  releases: ReleaseRef[];
  /**
   * The first deploy ran code from before releases existed: it has no release record and no edge route, and its
   * image ID is looked up when a command first needs it.
   */
  legacy?: boolean;
  /** The edge route exists (a stable URL); routes are published by code from after the edge router came. */
  routed?: boolean;
  /** The last failure the record still shows (lastFailure or error), in the words the Temporal UI shows it. */
  failure?: string;
  /** The Temporal UI's current details of this deployment, set again by the run that resumes it. */
  details?: string;
}
