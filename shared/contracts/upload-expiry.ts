/**
 * The upload-expiry workflow's contract: its type name and its schedule's ID, no workflow code (docs/architecture.md,
 * "Layers and where code goes"). The name is the exported function's name in workflows/upload-expiry/workflow.ts,
 * which the worker registers; it returns how many uploads it deleted.
 */
export const UPLOAD_EXPIRY_WORKFLOW = 'expireUploadsWorkflow';

export const uploadExpiryScheduleId = (taskQueue: string) => `upload-expiry/${taskQueue}`;
