/**
 * What the api needs to start the webhook workflows: their type names and inputs, no workflow code
 * (docs/architecture.md, "Layers and where code goes"). The names are the exported functions' names in workflow.ts,
 * which the worker registers.
 */
export const WEBHOOK_WORKFLOWS = {
  delivery: 'webhookDeliveryWorkflow',
  resend: 'webhookResendWorkflow',
} as const;

export interface WebhookDeliveryInput {
  eventId: string;
  /** Delays between the first attempts, then one last attempt this long after the first (one config table). */
  retryDelaysS: number[];
  finalAttemptAfterS: number;
}

export interface WebhookResendInput {
  eventId: string;
  trigger: 'manual' | 'test';
}
