import { patched } from '@temporalio/workflow';

import { createRelease, local, recordStatus, routeTraffic, setReleaseStatus } from './activities';
import { PATCHES } from './patches';

/**
 * The record and release writes and the route switch: local activities in histories that have PATCHES.localWrites,
 * activities of their own in those recorded before it (which replay through exactly those commands).
 */
export function writes(): Pick<typeof local, 'recordStatus' | 'createRelease' | 'setReleaseStatus' | 'routeTraffic'> {
  return patched(PATCHES.localWrites) ? local : { recordStatus, createRelease, setReleaseStatus, routeTraffic };
}

/** Whether work that need not wait for another runs beside it (PATCHES.localWrites). */
export const overlapped = (): boolean => patched(PATCHES.localWrites);

/**
 * Waits for every one of `work` to end, then throws the first failure, if any. A status write still in flight must
 * not race the failure's own write of the same record (FerretDB writes a document back whole), so a failure beside it
 * is not acted on before it ends.
 */
export async function together(...work: (Promise<unknown> | undefined)[]): Promise<void> {
  const results = await Promise.allSettled(work);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
