import path from 'node:path';

import { ignore } from '@shared/ignore';

import type { Api } from '../api';
import { readLink, removeLink, writeLink } from '../link';
import type { Output } from '../output';
import { readDeployment, resolveGiven } from '../target';

/**
 * `slipway link ID|NAME`: points the folder at an existing deployment (a name is looked up in the list; one that
 * several deployments share is refused with them listed), after reading it, so a link is never written to something
 * this token cannot see.
 */
export async function link(api: Api, out: Output, given: string, o: { dir?: string }): Promise<void> {
  const dir = path.resolve(o.dir ?? '.');
  const target = await resolveGiven(api, given);
  const d = await readDeployment(api, target);
  const before = await readLink(dir).catch(ignore('a damaged link is what this command replaces'));
  const written = await writeLink(dir, { deploymentId: d.id, name: d.name, apiUrl: api.url });
  const ignored = written.ignoredIn.length ? `; .slipway/ added to ${written.ignoredIn.join(' and ')}` : '';
  const was =
    before && before.deploymentId !== d.id ? ` (it was linked to ${before.name}, ${before.deploymentId})` : '';
  out.result(
    { file: written.file, deploymentId: d.id, name: d.name, apiUrl: api.url, url: d.url, ignoredIn: written.ignoredIn },
    `linked ${dir} to ${d.name} (${d.id}, ${d.status})${was}${ignored}\n` +
      'slipway deploy here ships a new release of it; status, logs and the rest act on it without an ID',
  );
}

/** Removes the folder's link; the deployment itself is left as it is. */
export async function unlink(out: Output, o: { dir?: string }): Promise<void> {
  const dir = path.resolve(o.dir ?? '.');
  const removed = await removeLink(dir);
  if (!removed) {
    out.result({ file: null, unlinked: false }, `${dir} is not linked to a deployment; nothing to do`);
    return;
  }
  const l = removed.link;
  out.result(
    { file: removed.file, unlinked: true, ...(l ? { deploymentId: l.deploymentId, name: l.name } : {}) },
    `unlinked ${dir}${l ? ` from ${l.name} (${l.deploymentId}), which keeps running` : ''}\n` +
      'the next slipway deploy here creates a new app',
  );
}
