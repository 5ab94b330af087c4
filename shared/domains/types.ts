/**
 * A custom domain's record (docs/architecture.md, "Custom domains"). `status` is written by the api's verify and the
 * domain's workflow; who holds a verified host is decided by the immutable claim (`DomainClaim`), never by this
 * record, since two organisations may both have a pending record for the same host.
 */
export type DomainStatus = 'pending' | 'verified' | 'failed';

/** What the ownership record held at the last check. */
export type TxtFinding = 'found' | 'missing' | 'other' | 'error';
/** What the routing records (CNAME, or A/AAAA) held at the last check: a warning only, never a refusal. */
export type RoutingFinding = 'cname' | 'address' | 'missing' | 'elsewhere' | 'error';

export interface DomainCheck {
  at: Date;
  txt: TxtFinding;
  routing: RoutingFinding;
  /** What was found, and what to do about it, in words. */
  message: string;
}

export interface DomainRecord {
  _id: string;
  orgId: string;
  /** The deployment's project (null: the organisation's own), copied at creation: access is judged by it. */
  projectId: string | null;
  deploymentId: string;
  hostname: string;
  /** The deployment's stable host, which the CNAME names (fixed for the deployment's life). */
  stableHost: string;
  /** The value the TXT record must hold: random, shown to the domain's owner. */
  token: string;
  status: DomainStatus;
  lastCheck: DomainCheck | null;
  verifiedAt: Date | null;
  /** When the edge router last got the domain's route; null while it has none. */
  routedAt: Date | null;
  createdBy: string;
  createdAt: Date;
}

/** The one verified claim of a host, whatever the organisation: `_id` is the host, so a second insert fails. */
export interface DomainClaim {
  _id: string;
  orgId: string;
  domainId: string;
  deploymentId: string;
  at: Date;
}
