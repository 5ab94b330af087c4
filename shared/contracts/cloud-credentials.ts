/**
 * The cloud credentials check's contract (docs/architecture.md, "Cloud providers"): the api keeps the credentials a
 * PUT gives as a sealed candidate and asks this workflow to try them with the cloud's read-only call, so the SDK
 * runs in an activity and the credentials never enter history (only the candidate's ID does).
 */
export const CLOUD_CREDENTIALS_CHECK_WORKFLOW = 'cloudCredentialsCheckWorkflow';

export const cloudCredentialsCheckId = (candidateId: string) => `cloud-credentials-check/${candidateId}`;

export type CloudCredentialsCheck = { ok: true } | { ok: false; type: string; message: string; hint: string };
