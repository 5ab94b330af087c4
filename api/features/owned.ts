import type { Authz } from '@shared/authz/authorize';
import { isDuplicateKey } from '@shared/db/mongo';
import type { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';

/**
 * Inserts an organisation's new resource within its plan: the count (and size) is read and the record inserted under
 * one per-organisation lock, since FerretDB would not make a read-then-insert atomic; a name taken (the unique index's
 * duplicate key) is `taken`. `over` answers the refusal when the plan would be passed, or undefined.
 */
export async function insertWithinPlan(opts: {
  lock: KeyedLock;
  /** The lock's key and what it guards, for a wait that times out. */
  key: string;
  what: string;
  over: () => Promise<AppError | undefined>;
  insert: () => Promise<unknown>;
  taken: () => AppError;
}): Promise<void> {
  await opts.lock(opts.key, opts.what, async () => {
    const refusal = await opts.over();
    if (refusal) throw refusal;
    try {
      await opts.insert();
    } catch (err) {
      if (isDuplicateKey(err)) throw opts.taken();
      throw err;
    }
  });
}

/** A page filter of the organisation's resources as the caller may see them. */
export interface VisibleFilter {
  limit: number;
  offset: number;
  projectId?: string;
  /** Below org admin: the organisation's own and these projects' resources. */
  visibleProjects?: string[];
}

/**
 * Lists the organisation's resources the caller can see: everything for org owners and admins, the organisation's
 * own and the projects one belongs to otherwise; a project one cannot see lists nothing (never a 403).
 */
export async function listVisible<T, Q extends { projectId?: string | undefined; limit: number; offset: number }>(
  authz: Pick<Authz, 'visibility' | 'sees'>,
  principal: Principal,
  q: Q,
  list: (filter: VisibleFilter) => Promise<{ items: T[]; total: number }>,
): Promise<{ items: T[]; total: number }> {
  const v = await authz.visibility(principal);
  if (q.projectId && !authz.sees(v, q.projectId)) return { items: [], total: 0 };
  return list({
    limit: q.limit,
    offset: q.offset,
    ...(q.projectId ? { projectId: q.projectId } : {}),
    ...(v.all ? {} : { visibleProjects: v.projectIds }),
  });
}
