/**
 * The custom domain workflow's contract: what the api needs to start one and nudge it, no workflow code
 * (docs/architecture.md, "Layers and where code goes").
 */
import { defineSignal } from '@temporalio/workflow';

/** The exported function's name in workflows/domain/workflow.ts. */
export const DOMAIN_WORKFLOW = 'domainWorkflow';

/** One per domain: a second start while one runs is a signal to it instead. */
export const domainWorkflowId = (domainId: string) => `domain/${domainId}`;

export interface DomainWorkflowInput {
  domainId: string;
  /** First wait between background checks; it doubles up to maxS. */
  firstS: number;
  maxS: number;
  /** How long checks go on before the domain is marked failed. */
  windowS: number;
}

/**
 * Check now: sent by the api after its own verify (the domain may be verified: the route goes live) and after a
 * delete (the record is gone: the route goes).
 */
export const checkDomainSignal = defineSignal('checkDomain');

/** What one background check found. */
export type DomainCheckState = 'verified' | 'pending' | 'gone';
