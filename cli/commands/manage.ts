import { type Api, paceOf, unwrap } from '../api';
import { CliError } from '../errors';
import { deploymentId, type Output, parseTimeout } from '../output';
import { ask } from '../prompt';
import type { DeploymentView } from '../view';

/**
 * Destroying is permanent, so a person confirms by typing the deployment's name (read first, which also answers
 * "not found" before anything is asked). Without a terminal to ask on, only --yes destroys.
 */
export async function destroy(api: Api, out: Output, rawId: string, o: { yes?: boolean }): Promise<void> {
  const id = deploymentId(rawId);
  const d = unwrap<DeploymentView>((await api.get<unknown>(`/platform/deployments/${id}`)).body);
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
  await api.del(`/platform/deployments/${id}`);
  out.result({ id, name: d.name, destroyed: true }, `destroyed ${d.name} (${id})`);
}

interface CommandAccepted {
  deployment: DeploymentView;
  command: { id: string; name: string; url: string };
}

interface CommandProgress {
  id: string;
  state: 'running' | 'succeeded' | 'failed';
  outcome?: { status: string; revision: number; replicas: number };
  message?: string;
}

/** A command is looked at every 3 s at most (rollbacks are quick), slower when the platform budget runs low. */
const COMMAND_GAP_MS = 3000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Back to an earlier release: the platform's rollback command (`{revision?}`; none means the last release that was
 * healthy). The server answers once the deployment's workflow has accepted it (or 400 with why not: the status and
 * what it accepts); --wait then follows the command until it has succeeded or failed.
 */
export async function rollback(
  api: Api,
  out: Output,
  rawId: string,
  o: { revision?: string; wait?: boolean; timeout: string },
): Promise<void> {
  const id = deploymentId(rawId);
  const timeoutMs = parseTimeout(o.timeout);
  let revision: number | undefined;
  if (o.revision !== undefined) {
    revision = Number(o.revision);
    if (!Number.isInteger(revision) || revision < 1)
      throw new CliError(`--revision ${o.revision} is not a revision`, `slipway status ${id} lists the releases`);
  }
  const r = await api.request<unknown>('POST', `/platform/deployments/${id}/rollback`, {
    json: revision === undefined ? {} : { revision },
  });
  const accepted = unwrap<CommandAccepted>(r.body);
  const name = accepted.deployment.name;
  const target = revision ? `revision ${revision}` : 'the last healthy release';
  if (!o.wait) {
    out.result(accepted, `rollback of ${name} to ${target} accepted (${accepted.command.id})`);
    return;
  }
  out.info(`rollback of ${name} to ${target} accepted; following it`);
  const path = `/platform/deployments/${id}/commands/${encodeURIComponent(accepted.command.id)}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api.get<unknown>(path);
    const progress = unwrap<CommandProgress>(r.body);
    if (progress.state === 'succeeded') {
      const left = progress.outcome;
      out.result(progress, `${name} rolled back: release r${left?.revision ?? '?'} serves (${left?.status ?? '?'})`);
      return;
    }
    if (progress.state === 'failed')
      throw new CliError(
        `the rollback failed: ${progress.message ?? 'no reason given'}`,
        `the release that served before still serves; slipway status ${id}`,
        1,
        progress,
      );
    if (Date.now() >= deadline)
      throw new CliError(`the rollback is still running after ${o.timeout}`, `slipway status ${id}`, 2, progress);
    await sleep(paceOf(r.headers, COMMAND_GAP_MS));
  }
}
