import type { SearchAttributePair } from '@temporalio/common';

import { SEARCH_ATTRIBUTES } from '@shared/constants';
import type { DeploymentRecord, DeploymentSource } from '@shared/deployments/types';
import type { OrgRecord } from '@shared/identity/store';

/** A value in a Markdown code span: a backtick in it would end the span (names and image references have none). */
const code = (value: string) => `\`${value.replaceAll('`', '')}\``;

function sourceLine(source: DeploymentSource): string {
  if (source.type === 'image') return `image ${code(source.image)}`;
  if (source.type === 'git')
    return `Git ${code(source.repoUrl)}${source.branch ? ` (branch ${code(source.branch)})` : ''}`;
  return `uploaded archive ${code(source.uploadId)}`;
}

/** One line naming the app and its org: the workflow's summary, and its later runs' heading (`summary` in shared/contracts/deployment.ts). */
export const deploymentSummary = (record: Pick<DeploymentRecord, 'name'>, org: Pick<OrgRecord, 'name'>) =>
  `${record.name} of org ${org.name}`;

/**
 * How an operator finds a deployment in the Temporal UI, whose list would otherwise show only `deployment/<id>`:
 * search attributes to filter by (the workflow updates DeploymentStatus as it changes), and user metadata — a summary
 * naming the app and its org, details that do not change.
 */
export function workflowVisibility(record: DeploymentRecord, org: Pick<OrgRecord, 'name'>) {
  const typedSearchAttributes: SearchAttributePair[] = [
    { key: SEARCH_ATTRIBUTES.deploymentId, value: record._id },
    { key: SEARCH_ATTRIBUTES.orgId, value: record.orgId },
    { key: SEARCH_ATTRIBUTES.status, value: record.status },
    { key: SEARCH_ATTRIBUTES.name, value: record.name },
    ...(record.projectId ? [{ key: SEARCH_ATTRIBUTES.projectId, value: record.projectId }] : []),
  ];
  return {
    typedSearchAttributes,
    staticSummary: deploymentSummary(record, org),
    staticDetails: [
      `Deployment ${code(record.name)} (${code(record._id)}) of org ${code(org.name)} (${code(record.orgId)})`,
      `Project: ${record.projectId ? code(record.projectId) : 'none'}`,
      `Source: ${sourceLine(record.source)}, port ${record.port}`,
    ].join('\n\n'),
  };
}
