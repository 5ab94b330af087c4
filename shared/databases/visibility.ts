import type { SearchAttributePair } from '@temporalio/common';

import { SEARCH_ATTRIBUTES } from '../constants';
import type { DatabaseRecord } from './types';

const code = (value: string) => `\`${value.replaceAll('`', '')}\``;

/**
 * What the starter of `database/<id>` passes to `workflow.start` so an operator finds the database in the Temporal UI:
 * the OrgId (and ProjectId) search attributes, and a summary naming the database, its engine and size, its org.
 */
export function databaseWorkflowVisibility(
  d: Pick<DatabaseRecord, '_id' | 'orgId' | 'projectId' | 'name' | 'sizeGb' | 'engine' | 'kind' | 'deploymentId'>,
  org?: { name: string },
) {
  const typedSearchAttributes: SearchAttributePair[] = [
    { key: SEARCH_ATTRIBUTES.orgId, value: d.orgId },
    ...(d.projectId ? [{ key: SEARCH_ATTRIBUTES.projectId, value: d.projectId }] : []),
  ];
  return {
    typedSearchAttributes,
    staticSummary: `${d.engine} database ${d.name} (${d.sizeGb} GB)${org ? ` of org ${org.name}` : ''}`,
    staticDetails: [
      `Database ${code(d.name)} (${code(d._id)}) of org ${org ? `${code(org.name)} ` : ''}(${code(d.orgId)})`,
      d.kind === 'service'
        ? `Beside deployment ${code(d.deploymentId ?? '')}`
        : `Managed, in project ${code(d.projectId ?? '')}`,
      `Engine: ${d.engine}; storage: ${d.sizeGb} GB`,
    ].join('\n\n'),
  };
}
