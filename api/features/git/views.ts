import type { GitBindingRecord, GitConnectionRecord, GitDeliveryRecord } from '@shared/git-bindings/types';

/** A connection as clients see it: the secret's ID, never the token. */
export const connectionView = (c: GitConnectionRecord) => ({
  id: c._id,
  provider: c.provider,
  baseUrl: c.baseUrl,
  tokenSecretId: c.tokenSecretId,
  vaultEnvironment: c.vaultEnvironment,
  createdAt: c.createdAt.toISOString(),
});

/** Where a binding's Git host posts: PUBLIC_URL when set, else the origin the request came in on. */
export const webhookUrlOf = (publicUrl: string, bindingId: string) =>
  `${publicUrl.replace(/\/$/, '')}/hooks/git/${bindingId}`;

/** A binding without its webhook secret: the only way one is shown after it was made. */
export const bindingView = (b: GitBindingRecord, publicUrl: string) => ({
  id: b._id,
  connectionId: b.connectionId,
  provider: b.provider,
  repoUrl: b.repoUrl,
  branch: b.branch,
  deploymentId: b.target.type === 'deployment' ? b.target.deploymentId : null,
  projectId: b.projectId,
  target: b.target.type,
  webhookUrl: webhookUrlOf(publicUrl, b._id),
  createdAt: b.createdAt.toISOString(),
});

export const deliveryView = (d: GitDeliveryRecord) => ({
  id: d._id,
  deliveryId: d.deliveryId,
  provider: d.provider,
  event: d.event,
  ref: d.ref,
  commit: d.commit,
  receivedAt: d.receivedAt.toISOString(),
  outcome: d.outcome,
  reason: d.reason,
  releases: d.releases,
});
