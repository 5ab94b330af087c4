import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { ignore } from '@shared/ignore';

import { type Api, unwrap } from '../api';
import { CliError } from '../errors';
import { readLink } from '../link';
import type { Output } from '../output';
import { onTarget, readDeployment, type Target } from '../target';
import type { DeploymentView, Release } from '../view';

/** The newest deployments this token can see; the folder's linked one is marked with *. */
export async function list(api: Api, out: Output, o: { limit: string }): Promise<void> {
  const limit = Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new CliError(`--limit ${o.limit}: give 1 to 100`);
  const r = unwrap<{ deployments: DeploymentView[]; total: number }>(
    (await api.get<unknown>(`/platform/deployments?limit=${limit}`)).body,
  );
  const linked = await readLink('.').catch(ignore('a damaged link marks nothing; commands that use it say so'));
  const rows = r.deployments.map((d) => [
    `${linked?.deploymentId === d.id ? '*' : ' '} ${d.name}`,
    d.status,
    d.revision !== undefined ? `r${d.revision}` : '-',
    d.url ?? '-',
    d.id,
  ]);
  const widths = [0, 1, 2, 3].map((i) =>
    Math.max(...[['  NAME', 'STATUS', 'REL', 'URL'][i]!, ...rows.map((x) => x[i]!)].map((c) => c.length)),
  );
  const line = (cells: string[]) => cells.map((c, i) => (i < 4 ? c.padEnd(widths[i]!) : c)).join('  ');
  const text = r.deployments.length
    ? [line(['  NAME', 'STATUS', 'REL', 'URL', 'ID']), ...rows.map(line)].join('\n') +
      (r.total > r.deployments.length
        ? `\n(${r.deployments.length} of ${r.total}, newest first; --limit shows up to 100)`
        : '')
    : 'no deployments yet: slipway deploy creates one from this folder';
  out.result(r, text);
}

/** Whether `cmd` is an executable file on the PATH. */
function onPath(cmd: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => {
    try {
      fs.accessSync(path.join(dir, cmd), fs.constants.X_OK);
      return true;
    } catch {
      // Not in this directory (or not executable there): the next one may have it.
      return false;
    }
  });
}

/**
 * Prints the deployment's URL; on a terminal, also opens it with the desktop's opener (xdg-open, or open on macOS)
 * when there is one. In a pipe or a script only the URL is printed, for whatever reads it.
 */
export async function open(api: Api, out: Output, target: Target): Promise<void> {
  const d = await readDeployment(api, target);
  if (!d.url) throw new CliError(`${d.name} has no URL yet (${d.status})`, 'slipway status shows where it stands');
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const opened = !out.json && Boolean(process.stdout.isTTY) && onPath(opener);
  // The URL is printed either way: an opener that fails to start leaves the person with it.
  if (opened)
    spawn(opener, [d.url], { detached: true, stdio: 'ignore' })
      .on('error', () => undefined)
      .unref();
  out.result({ id: d.id, name: d.name, url: d.url }, d.url);
}

interface Releases {
  releases: Release[];
  total: number;
  limit: number;
  offset: number;
}

/** Every release, newest first: what `rollback` can go back to. */
export async function releases(api: Api, out: Output, target: Target, o: { limit: string }): Promise<void> {
  const limit = Number(o.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new CliError(`--limit ${o.limit}: give 1 to 100`);
  const r = await onTarget(target, () =>
    api.get<unknown>(`/platform/deployments/${target.id}/releases?limit=${limit}`),
  );
  const body = unwrap<Releases>(r.body);
  const rows = body.releases.map((x) => {
    const how =
      x.trigger === 'rollback' && x.rollbackOf !== undefined ? `rollback to r${x.rollbackOf}` : (x.trigger ?? '');
    return `r${x.revision}  ${(x.status ?? '').padEnd(10)} ${how.padEnd(16)} ${x.createdAt ?? ''}  env: ${x.envNames?.join(', ') || '-'}`;
  });
  out.result(body, rows.length ? rows.join('\n') : 'no releases yet');
}

/**
 * The environment's names (never values: the API returns none). `slipway env set` and `env unset` change single
 * variables: the server merges them into the sealed values (./control.ts).
 */
export async function envList(api: Api, out: Output, target: Target): Promise<void> {
  const d = await readDeployment(api, target);
  const names = d.envVarNames ?? [];
  out.result(
    { id: d.id, name: d.name, envVarNames: names },
    names.length ? names.join('\n') : `${d.name} has no environment variables`,
  );
}
