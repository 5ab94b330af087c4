import { setTimeout as sleep } from 'node:timers/promises';

import { ApplicationFailure } from '@temporalio/common';

import type { CredentialSealer } from '@shared/databases/credentials';
import { connectionUrl } from '@shared/databases/engines';
import type { DatabaseStore } from '@shared/databases/store';
import type { EnvRefResolver } from '@shared/deployments/attachments';

/**
 * How long a container's start waits for a database it refers to: a database created with its release starts beside
 * it (seconds, a minute for a first start on a slow host), and an app given a host that does not answer yet would fail
 * its readiness for nothing.
 */
const READY_WAIT_MS = 120_000;
const POLL_MS = 500;

/**
 * Resolves a release's references to databases into their connection URLs, when one of its containers starts. Each
 * database must be the deployment's organisation's (a reference cannot cross organisations, whatever its document
 * says) and ready; one still being made is waited for.
 */
export function createDatabaseEnvResolver(deps: {
  store: Pick<DatabaseStore, 'getAny'>;
  sealer: Pick<CredentialSealer, 'open'>;
  readyWaitMs?: number;
}): EnvRefResolver {
  const waitMs = deps.readyWaitMs ?? READY_WAIT_MS;
  return async (orgId, _deploymentId, refs) => {
    const values: Record<string, string> = {};
    for (const { name, ref } of refs) {
      // Other kinds of reference are another resolver's (activities/index.ts joins them).
      if (ref.type !== 'database') continue;
      const deadline = Date.now() + waitMs;
      for (;;) {
        const d = await deps.store.getAny(ref.databaseId);
        if (!d || d.orgId !== orgId || d.status === 'deleting')
          throw ApplicationFailure.nonRetryable(
            `${name} refers to database ${ref.databaseId}, which no longer exists; unlink it (or delete the deployment's database) and redeploy`,
            'EnvRefUnresolved',
          );
        if (d.status === 'ready' || d.status === 'restoring') {
          values[name] = connectionUrl(d.engine, d.host, deps.sealer.open(d));
          break;
        }
        if (d.status === 'failed' || Date.now() > deadline)
          throw ApplicationFailure.nonRetryable(
            `${name} refers to database ${d.name}, which is ${d.status}${d.error ? ` (${d.error})` : ''}; redeploy once it reads ready`,
            'EnvRefUnresolved',
          );
        await sleep(POLL_MS);
      }
    }
    return values;
  };
}
