import path from 'node:path';

import { type Api, unwrap } from './api';
import { CliError } from './errors';
import { type Link, linkFile, readLink } from './link';
import type { DeploymentView } from './view';

/** Which deployment a command is about: named on the command line, or the folder's link. */
export interface Target {
  id: string;
  /** Known before any read when it came from a link or a name. */
  name?: string;
  /** Set when it came from the folder's link: a 404 then means the link went stale, and says how to mend it. */
  link?: { dir: string; file: string; link: Link };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A deployment name as the API takes one: a DNS label. */
const NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

export const isDeploymentId = (value: string) => UUID.test(value);

/** What a list row says to tell two deployments of one name apart. */
const candidate = (d: DeploymentView) => ({ id: d.id, status: d.status, url: d.url, createdAt: d.createdAt });

/**
 * The one deployment called `name` among `deployments`, or why not: none (with where names are listed), or several
 * (each with what tells them apart, so the person can pick an ID). Names are not unique: two deploys of one name make
 * two deployments.
 */
export function pickByName(name: string, deployments: DeploymentView[]): DeploymentView {
  const matches = deployments.filter((d) => d.name === name);
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0)
    throw new CliError(`no deployment named ${name}`, 'slipway list shows the names and IDs this token can see', 1, {
      status: 404,
      message: `No deployment named ${name}.`,
    });
  const rows = matches.map((d) => `  ${d.id}  ${d.status.padEnd(9)} ${d.url ?? '-'}  created ${d.createdAt}`);
  throw new CliError(
    `${matches.length} deployments are named ${name}, newest first:\n${rows.join('\n')}`,
    'give the ID of the one you mean',
    1,
    { message: `${matches.length} deployments are named ${name}.`, name, candidates: matches.map(candidate) },
  );
}

/** Rows per list read (the route's maximum), and reads at most: a name is looked for among the newest 5000. */
const PAGE = 100;
const MAX_PAGES = 50;

/** Every deployment this token can see, newest first, read a page at a time. */
export async function listAll(api: Api): Promise<DeploymentView[]> {
  const all: DeploymentView[] = [];
  for (let page = 0; page < MAX_PAGES; page++) {
    const r = await api.get<unknown>(`/platform/deployments?limit=${PAGE}&offset=${all.length}`);
    const { deployments, total } = unwrap<{ deployments: DeploymentView[]; total: number }>(r.body);
    all.push(...deployments);
    if (deployments.length < PAGE || all.length >= total) break;
  }
  return all;
}

/** An ID as given (lower-cased), or a name looked up in the list; anything else is refused before any request. */
export async function resolveGiven(api: Api, given: string): Promise<Target> {
  if (isDeploymentId(given)) return { id: given.toLowerCase() };
  if (!NAME.test(given))
    throw new CliError(
      `"${given}" is neither a deployment ID nor a deployment name`,
      'IDs look like 3f2b…-…, names are lowercase letters, digits and -; slipway list shows both',
    );
  const d = pickByName(given, await listAll(api));
  return { id: d.id, name: d.name };
}

/**
 * The deployment a command acts on: `given` (an ID or a name), or else the link of `dir`. A link made against
 * another server is refused rather than followed: the token in use belongs to this one.
 */
export async function resolveTarget(api: Api, given: string | undefined, dir = '.'): Promise<Target> {
  if (given !== undefined) return resolveGiven(api, given);
  const link = await readLink(dir);
  if (!link)
    throw new CliError(
      `no deployment given, and ${path.resolve(dir)} is not linked to one`,
      'pass its ID or name (slipway list shows them), or link this folder: slipway link ID|NAME ' +
        '(slipway deploy links the folder when it creates the app)',
    );
  checkSameApi(link, api.url);
  return { id: link.deploymentId, name: link.name, link: { dir, file: linkFile(dir), link } };
}

export function checkSameApi(link: Link, url: string): void {
  if (link.apiUrl !== url)
    throw new CliError(
      `this folder is linked to ${link.name} on ${link.apiUrl}, but this command talks to ${url}`,
      `pass --url ${link.apiUrl} (with a token of that server), or link the folder to an app here: slipway link ID|NAME`,
    );
}

const isNotFound = (err: unknown) =>
  err instanceof CliError && (err.json as { status?: unknown } | undefined)?.status === 404;

/** A link whose deployment the server does not show: destroyed, or of another organisation than the token's. */
export function staleLink(target: Target, apiBody?: unknown): CliError {
  const l = target.link!;
  return new CliError(
    `this folder is linked to ${l.link.name} (${l.link.deploymentId}), which ${l.link.apiUrl} does not show: ` +
      'it was destroyed, or it belongs to an organisation this token is not of',
    'link the folder to another app: slipway link ID|NAME; or create a new one here: slipway deploy --new ' +
      '(slipway unlink removes the link)',
    1,
    { ...(apiBody && typeof apiBody === 'object' ? apiBody : {}), status: 404, link: l.file },
  );
}

/** Runs `fn` on the target; a 404 on a linked one becomes the stale link's message, with its fixes. */
export async function onTarget<T>(target: Target, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (target.link && isNotFound(err)) throw staleLink(target, (err as CliError).json);
    throw err;
  }
}

/** The target's deployment as the platform shows it (a stale link said as such). */
export function readDeployment(api: Api, target: Target): Promise<DeploymentView> {
  return onTarget(target, async () =>
    unwrap<DeploymentView>((await api.get<unknown>(`/platform/deployments/${target.id}`)).body),
  );
}
