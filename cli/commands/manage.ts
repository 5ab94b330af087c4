import { ignore } from '@shared/ignore';

import type { Api } from '../api';
import { CliError } from '../errors';
import { readLink, removeLink } from '../link';
import type { Output } from '../output';
import { ask } from '../prompt';
import { onTarget, readDeployment, type Target } from '../target';

/**
 * Destroying is permanent, so a person confirms by typing the deployment's name (read first, which also answers
 * "not found" before anything is asked). Without a terminal to ask on, only --yes destroys. A folder linked to the
 * destroyed deployment is unlinked: its next deploy creates a new app instead of failing on a stale link.
 */
export async function destroy(api: Api, out: Output, target: Target, o: { yes?: boolean }): Promise<void> {
  const d = await readDeployment(api, target);
  const id = d.id;
  if (!o.yes) {
    if (!process.stdin.isTTY)
      throw new CliError(`not destroying ${d.name} (${id}) without confirmation`, 'pass --yes to destroy it');
    const answer = await ask(
      `Destroy ${d.name} (${id}, ${d.status})? Its containers, images and logs go, and it cannot be undone.\n` +
        `Type the name (${d.name}) to confirm: `,
    );
    if (answer !== d.name) throw new CliError(`not destroyed: the name typed was not ${d.name}`);
  }
  // The platform's DELETE: the compatibility API's would spend the organisation's 20 writes an hour.
  await onTarget(target, () => api.del(`/platform/deployments/${id}`));
  const dir = target.link?.dir ?? '.';
  const link = await readLink(dir).catch(ignore('a damaged link is not this deployment’s: slipway unlink removes it'));
  const unlinked = link?.deploymentId === id ? await removeLink(dir) : undefined;
  out.result(
    { id, name: d.name, destroyed: true, ...(unlinked ? { unlinked: unlinked.file } : {}) },
    `destroyed ${d.name} (${id})${unlinked ? `; this folder is unlinked (${unlinked.file} removed)` : ''}`,
  );
}
