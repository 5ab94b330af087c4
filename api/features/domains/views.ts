import { dnsRecordsFor } from '@shared/domains/records';
import type { DomainRecord } from '@shared/domains/types';

/** What a domain view needs of the configuration: the router's public addresses and its HTTPS port. */
export interface DomainViewConfig {
  publicIps: readonly string[];
  tlsPort: number;
}

/** A domain as both the platform API and MCP show it. */
export const domainView = (d: DomainRecord, cfg: DomainViewConfig) => ({
  id: d._id,
  hostname: d.hostname,
  deploymentId: d.deploymentId,
  projectId: d.projectId,
  status: d.status,
  routed: d.status === 'verified' && d.routedAt !== null,
  url: cfg.tlsPort === 443 ? `https://${d.hostname}` : `https://${d.hostname}:${cfg.tlsPort}`,
  token: d.token,
  dnsRecords: dnsRecordsFor(d, d.stableHost, cfg.publicIps),
  lastCheck: d.lastCheck ? { ...d.lastCheck, at: d.lastCheck.at.toISOString() } : null,
  verifiedAt: d.verifiedAt?.toISOString() ?? null,
  createdAt: d.createdAt.toISOString(),
});
