import path from 'node:path';

import type { Api } from '../api';
import { packDirectory } from '../archive';
import { CliError } from '../errors';
import type { Output } from '../output';

/** A deploy's flags, as `slipway deploy` takes them (deploy.ts) and a linked folder's release reads them (release.ts). */
export interface DeployOptions {
  image?: string;
  dir?: string;
  /** A URL, or true for `--git` alone: the linked app's own repository and branch. */
  git?: string | true;
  branch?: string;
  dockerfile?: string;
  name?: string;
  port?: string;
  env: string[];
  requestId?: string;
  wait?: boolean;
  timeout: string;
  new?: boolean;
}

/** The one source of a deploy; none given is the folder it runs in. */
export type Source =
  | { kind: 'image'; image: string }
  | { kind: 'dir'; dir: string }
  /** No URL: the linked app's own repository (and branch, unless --branch names another). */
  | { kind: 'git'; url?: string };

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `K=V` sets K; a bare `K` takes K's value from this shell, as `docker run -e K` does. */
/** `how` is what the pairs were given as, for the messages: `--env ` on deploy and redeploy, nothing on env set. */
export function parseEnv(pairs: string[], how = '--env '): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const key = eq === -1 ? pair : pair.slice(0, eq);
    if (!ENV_NAME.test(key))
      throw new CliError(`${how}${key}: not a variable name`, 'names match [A-Za-z_][A-Za-z0-9_]*');
    const value = eq === -1 ? process.env[key] : pair.slice(eq + 1);
    if (value === undefined) throw new CliError(`${how}${key}: not set in this shell`, `write ${how}${key}=value`);
    env[key] = value;
  }
  return env;
}

/**
 * What a new environment does to the names, said before it is sent: a redeploy's envVars replace the whole set, so a
 * variable left out is removed, and the person should see which. Names only: values are never printed.
 */
export function envChange(before: string[], after: string[]): string {
  const removed = before.filter((n) => !after.includes(n));
  return (
    `the environment is replaced by ${after.length ? after.join(', ') : 'none'}` +
    (removed.length ? ` (removed: ${removed.join(', ')})` : ' (nothing removed)')
  );
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new CliError(`--port ${value} is not a port`, 'give the port the app listens on, 1 to 65535');
  return port;
}

/**
 * Zips the folder (what its .gitignore and .dockerignore leave out stays here) and uploads it; its uploadId names it
 * in a deploy or a redeploy. The upload has no platform route: it goes to the compatibility API.
 */
export async function uploadFolder(api: Api, out: Output, dir: string): Promise<string> {
  const packed = await packDirectory(dir);
  out.info(
    `zipped ${packed.files.length} files (${(packed.zip.length / 1024).toFixed(1)} KiB) from ${path.resolve(dir)}` +
      `${packed.ignored ? `, ${packed.ignored} ignored` : ''}` +
      `${packed.skipped.length ? `; skipped (not regular files): ${packed.skipped.join(', ')}` : ''}`,
  );
  const form = new FormData();
  form.append('archive', new Blob([new Uint8Array(packed.zip)], { type: 'application/zip' }), 'source.zip');
  return (await api.request<{ uploadId: string }>('POST', '/compat/uploads/zip', { form })).body.uploadId;
}

/**
 * A name the API takes (a DNS label), made from a folder's, an image's or a repository's: lower-cased, runs of other
 * characters as one "-", at most 63 characters. Undefined when nothing of it is left.
 */
export function nameFrom(raw: string): string | undefined {
  const n = raw
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return n || undefined;
}

/** The last path segment of an image reference (no registry, tag or digest) or of a repository URL (no .git). */
export function baseNameOf(source: { image?: string; git?: string; folder: string }): string {
  if (source.image) return source.image.split('@')[0]!.split('/').at(-1)!.split(':')[0]!;
  if (source.git) return (source.git.replace(/\/+$/, '').split('/').at(-1) ?? '').replace(/\.git$/, '');
  return path.basename(source.folder);
}
