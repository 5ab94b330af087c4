import fs from 'node:fs/promises';
import path from 'node:path';

import dockerignore from '@balena/dockerignore';
import ignore from 'ignore';

import { ifAbsent } from '@shared/ignore';

import { CliError } from './errors';

/**
 * A folder's link to its app, as `.slipway/app.json` in the folder: written by the first `slipway deploy` there (or
 * `slipway link`), read by every later command run there, so the tenth deploy ships a new release of the same
 * deployment instead of creating a tenth one. It names the deployment and the API it lives on, never a token: the
 * folder is often a Git checkout, and the token stays in the user's config dir.
 */
export interface Link {
  deploymentId: string;
  name: string;
  apiUrl: string;
}

export const LINK_DIR = '.slipway';
const LINK_FILE = 'app.json';
/** What is added to an ignore file: the whole folder, should later versions keep more than the link in it. */
export const LINK_IGNORE_RULE = `${LINK_DIR}/`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const linkFile = (dir: string) => path.join(path.resolve(dir), LINK_DIR, LINK_FILE);

/** The folder's link, or undefined when it has none; a file that is not a link is named, with how to mend it. */
export async function readLink(dir: string): Promise<Link | undefined> {
  const file = linkFile(dir);
  const text = await fs.readFile(file, 'utf8').catch(ifAbsent(undefined));
  if (text === undefined) return undefined;
  let parsed: Partial<Record<keyof Link, unknown>> | undefined;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    // Not JSON at all: reported below like any other file that is not a link.
    parsed = undefined;
  }
  const { deploymentId, name, apiUrl } = parsed ?? {};
  if (
    typeof deploymentId !== 'string' ||
    !UUID.test(deploymentId) ||
    typeof name !== 'string' ||
    typeof apiUrl !== 'string'
  )
    throw new CliError(
      `${file} is not a Slipway link (it needs deploymentId, name and apiUrl)`,
      'rewrite it with slipway link ID|NAME, or remove it with slipway unlink',
    );
  return { deploymentId, name, apiUrl };
}

export interface Written {
  file: string;
  /** The ignore files `.slipway/` was added to (those the folder has that did not already leave it out). */
  ignoredIn: string[];
}

/**
 * Writes the link (through a temporary file renamed into place, so a crash never leaves half of one), then adds
 * `.slipway/` to the folder's .gitignore and .dockerignore where they exist, so the link is neither committed nor
 * sent into an image that someone builds from the folder. Files the folder does not have are not created.
 */
export async function writeLink(dir: string, link: Link): Promise<Written> {
  const file = linkFile(dir);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const only: Link = { deploymentId: link.deploymentId, name: link.name, apiUrl: link.apiUrl };
  await fs.writeFile(tmp, `${JSON.stringify(only, null, 2)}\n`);
  await fs.rename(tmp, file);
  const ignoredIn: string[] = [];
  for (const kind of ['.gitignore', '.dockerignore'] as const)
    if (await addIgnoreRule(path.join(path.resolve(dir), kind), kind)) ignoredIn.push(kind);
  return { file, ignoredIn };
}

/**
 * Removes the link (and `.slipway/` when nothing else is in it). Undefined when there was none; `link` is what it
 * said, unless the file was damaged.
 */
export async function removeLink(dir: string): Promise<{ file: string; link?: Link } | undefined> {
  const link = await readLink(dir).catch((err: unknown) => {
    // A damaged file is still removed: that is what unlink is for.
    if (err instanceof CliError) return undefined;
    throw err;
  });
  const file = linkFile(dir);
  const existed = await fs.rm(file).then(() => true, ifAbsent(false));
  if (!existed) return undefined;
  const rest = await fs.readdir(path.dirname(file)).catch(ifAbsent([]));
  if (rest.length === 0) await fs.rmdir(path.dirname(file)).catch(ifAbsent(undefined));
  return { file, ...(link ? { link } : {}) };
}

/** Whether these rules already leave the link out: git's rules for .gitignore, Docker's for .dockerignore. */
export function ignoresLink(kind: '.gitignore' | '.dockerignore', rules: string): boolean {
  const linkPath = `${LINK_DIR}/${LINK_FILE}`;
  if (kind === '.gitignore') {
    const ig = ignore().add(rules);
    return ig.ignores(`${LINK_DIR}/`) || ig.ignores(linkPath);
  }
  const ig = dockerignore({ ignorecase: false }).add(rules);
  return ig.ignores(LINK_DIR) || ig.ignores(linkPath);
}

/** Appends `.slipway/` to an ignore file that exists and does not leave it out yet; true when it did. */
async function addIgnoreRule(file: string, kind: '.gitignore' | '.dockerignore'): Promise<boolean> {
  const rules = await fs.readFile(file, 'utf8').catch(ifAbsent(undefined));
  if (rules === undefined || ignoresLink(kind, rules)) return false;
  const sep = rules === '' || rules.endsWith('\n') ? '' : '\n';
  await fs.appendFile(
    file,
    `${sep}# the folder's link to its Slipway app (slipway deploy, slipway link)\n${LINK_IGNORE_RULE}\n`,
  );
  return true;
}
