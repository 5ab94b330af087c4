/**
 * Changes to the deployment workflow that alter its commands, each behind `patched()`: deployments already running the
 * code before it replay their recorded histories unchanged (docs/architecture.md, "A deployment's lifecycle, as
 * workflows", test/unit/replay.test.ts).
 */
export const PATCHES = {
  /**
   * startContainer waits for its cancellation to complete. Deprecated (deprecatePatch): every stored history that
   * starts a container has it, so only the waiting start remains; the call stays so their markers still replay.
   */
  startWaitsForCancel: 'start-container-waits-for-cancel',
  /** A workflow started by a destroy (signalWithStart) goes straight to removal. */
  destroyedBeforeDeploy: 'destroyed-before-deploy',
  /**
   * The first deploy makes release 1 (image ID recorded, replicas, the edge route) instead of one bare container.
   * Commands need no patch of their own: they arrive as Updates, which no history from before them contains.
   */
  releases: 'deployment-releases',
  /** Every status change (and the destroy) is upserted as the DeploymentStatus search attribute. */
  visibleStatus: 'deployment-visible-status',
  /** Instances taken out of the route are removed only after DRAIN_MS, not at once. */
  drainBeforeRemove: 'drain-before-remove',
  /**
   * Status and release writes and the route switch run as local activities, and what need not wait does not: the
   * first deploy's status write beside the image prepare, the "started" write beside the readiness wait, the release
   * marked active beside the `running` write (activities.ts `local`, releases.ts).
   */
  localWrites: 'deployment-local-writes',
} as const;
