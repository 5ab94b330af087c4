import type { Sealed } from '../secrets/box';
import type { SecretEnvironment } from '../secrets/store';

/** The Git hosts a connection names: each decides the default base URL and the webhook scheme a binding expects. */
export const GIT_PROVIDERS = ['github', 'gitlab', 'gitea', 'generic'] as const;
export type GitProvider = (typeof GIT_PROVIDERS)[number];

/** A Git host and the org secret holding the token that reads its private repositories (never the token itself). */
export interface GitConnectionRecord {
  _id: string;
  orgId: string;
  provider: GitProvider;
  baseUrl: string;
  tokenSecretId: string;
  /** The secret's vault environment: every redeploy a binding asks for reads the token from there. */
  vaultEnvironment: SecretEnvironment;
  createdBy: string;
  createdAt: Date;
}

/** What a push ships to: one deployment, or the project's deployments built from the bound repository. */
export type BindingTarget = { type: 'deployment'; deploymentId: string } | { type: 'project'; projectId: string };

export interface GitBindingRecord {
  _id: string;
  orgId: string;
  /** The target's project (the deployment's, or the project bound): access to the binding is judged there. */
  projectId: string | null;
  connectionId: string | null;
  /** The provider whose webhook scheme a delivery must use: the connection's, else any the headers show. */
  provider: GitProvider | null;
  repoUrl: string;
  branch: string;
  target: BindingTarget;
  /** The webhook secret sealed under SECRETS_KEY with the binding's identity: HMAC verification needs the secret. */
  secretSealed: Sealed;
  /** The scopes among deployment.create and secret.use the creator's token held: deliveries act with no more. */
  scopes: string[];
  createdBy: string;
  createdAt: Date;
}

export const DELIVERY_OUTCOMES = ['shipped', 'ignored', 'refused', 'failed'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** One release a delivery asked for: the deployment and the redeploy command following it. */
export interface ShippedRelease {
  deploymentId: string;
  commandId: string;
}

/**
 * One webhook delivery and what came of it. `key` is the delivery's ID for a verified delivery (unique per binding:
 * a replay conflicts on insert), and a fresh one for a refused delivery, whose claimed ID proves nothing and so must
 * never take the real delivery's place.
 */
export interface GitDeliveryRecord {
  _id: string;
  orgId: string;
  bindingId: string;
  key: string;
  deliveryId: string | null;
  provider: GitProvider | null;
  event: string | null;
  ref: string | null;
  commit: string | null;
  receivedAt: Date;
  outcome: DeliveryOutcome | 'received';
  reason: string | null;
  releases: ShippedRelease[];
}
