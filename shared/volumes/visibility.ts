import type { SearchAttributePair } from '@temporalio/common';

import { SEARCH_ATTRIBUTES } from '../constants';
import type { VolumeRecord } from './types';

/** A value in a Markdown code span: a backtick in it would end the span. */
const code = (value: string) => `\`${value.replaceAll('`', '')}\``;

/**
 * What the starter of `volume/<id>` passes to `workflow.start` so an operator finds the volume in the Temporal UI:
 * the OrgId search attribute, and user metadata naming the volume, its size and its org. The workflow shows its status
 * and any failure in its current details as they change.
 */
export function volumeWorkflowVisibility(
  record: Pick<VolumeRecord, '_id' | 'orgId' | 'projectId' | 'name' | 'sizeGb'>,
  org?: { name: string },
) {
  const typedSearchAttributes: SearchAttributePair[] = [
    { key: SEARCH_ATTRIBUTES.orgId, value: record.orgId },
    ...(record.projectId ? [{ key: SEARCH_ATTRIBUTES.projectId, value: record.projectId }] : []),
  ];
  return {
    typedSearchAttributes,
    staticSummary: `volume ${record.name} (${record.sizeGb} GB)${org ? ` of org ${org.name}` : ''}`,
    staticDetails: [
      `Volume ${code(record.name)} (${code(record._id)}) of org ${org ? `${code(org.name)} ` : ''}(${code(record.orgId)})`,
      `Project: ${record.projectId ? code(record.projectId) : 'none'}`,
      `Size: ${record.sizeGb} GB, an ext4 image allocated in full on the engine's host`,
    ].join('\n\n'),
  };
}
