import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { CliError } from './errors';

/** Where `slipway login` keeps the API address and token: the user's config dir, readable by the user only. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'slipway', 'config.json');
}

export interface Credentials {
  url: string;
  token: string;
}

const DEFAULT_URL = 'http://localhost:3000';

export async function readSaved(file = configPath()): Promise<Partial<Credentials>> {
  try {
    const parsed = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<Credentials>;
    return {
      ...(typeof parsed.url === 'string' ? { url: parsed.url } : {}),
      ...(typeof parsed.token === 'string' ? { token: parsed.token } : {}),
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`${file} could not be read as JSON`, 'run slipway login again to rewrite it');
  }
}

/**
 * Writes the file 0600 in a 0700 directory, through a temporary file renamed into place: an existing file that was
 * wider open is replaced, not rewritten under its old mode, and a crash never leaves half a token.
 */
export async function save(creds: Credentials, file = configPath()): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  await fs.chmod(tmp, 0o600);
  await fs.rename(tmp, file);
}

/** Flags first, then SLIPWAY_URL / SLIPWAY_TOKEN, then what `slipway login` saved. */
export async function resolveCredentials(flags: { url?: string; token?: string }): Promise<Credentials> {
  const saved = await readSaved();
  const url = normaliseUrl(flags.url ?? process.env.SLIPWAY_URL ?? saved.url ?? DEFAULT_URL);
  const token = flags.token ?? process.env.SLIPWAY_TOKEN ?? saved.token;
  if (!token) throw new CliError('no access token', 'run slipway login, or set SLIPWAY_TOKEN');
  return { url, token };
}

export function normaliseUrl(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new CliError(`"${value}" is not a URL`, 'give the API address, e.g. --url https://slipway.example.com');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new CliError(
      `"${value}" is not an http(s) URL`,
      'give the API address, e.g. --url https://slipway.example.com',
    );
  return u.toString().replace(/\/+$/, '');
}
