import { createApi } from '../api';
import { CliError } from '../errors';
import type { Output } from '../output';
import { askSecret } from '../prompt';
import { configPath, normaliseUrl, readSaved, save } from '../settings';

/**
 * Checks the token against the server before keeping it, then saves address and token in the user's config dir
 * (0600). The token comes from --token, SLIPWAY_TOKEN, or is asked for (not echoed); on a pipe, its first line.
 */
export async function login(out: Output, o: { url?: string; token?: string }): Promise<void> {
  const saved = await readSaved();
  const url = normaliseUrl(o.url ?? process.env.SLIPWAY_URL ?? saved.url ?? 'http://localhost:3000');
  const token = o.token ?? process.env.SLIPWAY_TOKEN ?? (await askSecret(`Access token for ${url}: `));
  if (!token) throw new CliError('no token given', 'paste an svc_ token, or pass --token / SLIPWAY_TOKEN');
  // Any authenticated read tells a valid token from a refused one; a 403 is a valid token without that scope.
  const r = await createApi({ url, token }).get<unknown>('/compat/providers', [403]);
  const file = configPath();
  await save({ url, token }, file);
  out.result(
    { url, configPath: file, ...(r.status === 403 ? { warning: 'the token may not read deployments' } : {}) },
    `logged in to ${url}; token saved in ${file}` +
      (r.status === 403 ? '\nnote: this token lacks deployment.read, so status and logs will be refused' : ''),
  );
}
