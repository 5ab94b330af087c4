/**
 * Changes to the webhook workflows that alter their commands, each behind `patched()`: deliveries already running
 * the code before it replay their recorded histories unchanged (test/unit/replay.test.ts).
 */
export const WEBHOOK_PATCHES = {
  /** An attempt is one local activity (send and record) instead of two activities on the task queue. */
  localAttempt: 'webhook-attempt-local',
} as const;
