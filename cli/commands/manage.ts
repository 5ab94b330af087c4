import { type Api, unwrap } from '../api';
import { CliError } from '../errors';
import { deploymentId, type Output } from '../output';
import { ask } from '../prompt';
import type { DeploymentView } from '../view';
import { statusText } from './status';

/**
 * Destroying is permanent, so a person confirms by typing the deployment's name (read first, which also answers
 * "not found" before anything is asked). Without a terminal to ask on, only --yes destroys.
 */
export async function destroy(api: Api, out: Output, rawId: string, o: { yes?: boolean }): Promise<void> {
  const id = deploymentId(rawId);
  const d = (await api.get<DeploymentView>(`/compat/deployments/${id}`)).body;
  if (!o.yes) {
    if (!process.stdin.isTTY)
      throw new CliError(`not destroying ${d.name} (${id}) without confirmation`, 'pass --yes to destroy it');
    const answer = await ask(
      `Destroy ${d.name} (${id}, ${d.status})? Its containers, images and logs go, and it cannot be undone.\n` +
        `Type the name (${d.name}) to confirm: `,
    );
    if (answer !== d.name) throw new CliError(`not destroyed: the name typed was not ${d.name}`);
  }
  await api.del(`/compat/deployments/${id}`);
  out.result({ id, name: d.name, destroyed: true }, `destroyed ${d.name} (${id})`);
}

/**
 * Back to an earlier release: the platform's rollback command (`{revision?}`; none means the last release that was
 * healthy). The server answers once the command is accepted; `slipway status` shows its progress.
 */
export async function rollback(api: Api, out: Output, rawId: string, o: { revision?: string }): Promise<void> {
  const id = deploymentId(rawId);
  let revision: number | undefined;
  if (o.revision !== undefined) {
    revision = Number(o.revision);
    if (!Number.isInteger(revision) || revision < 1)
      throw new CliError(`--revision ${o.revision} is not a revision`, `slipway status ${id} lists the releases`);
  }
  const r = await api.request<unknown>('POST', `/platform/deployments/${id}/rollback`, {
    json: revision === undefined ? {} : { revision },
  });
  const d = unwrap<DeploymentView>(r.body);
  out.result(
    d,
    `rollback of ${d.name ?? id} accepted${revision ? ` (to revision ${revision})` : ' (to the last healthy release)'}\n` +
      (d.status ? statusText(d) : ''),
  );
}
