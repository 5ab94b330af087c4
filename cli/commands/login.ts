import { createApi, unwrap } from '../api';
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
  // The token reads itself (no permission needed): a refused one is never saved, an accepted one says whose it is.
  const r = await createApi({ url, token }).get<unknown>('/platform/tokens/current', [401]);
  if (r.status === 401)
    throw new CliError(
      `${url} refused this token: ${(r.body as { message?: string }).message ?? 'invalid'}`,
      'check you copied all of it, or create one (slipway admin token create, or ask an owner of the organisation)',
      1,
      r.body,
    );
  const me = unwrap<CurrentToken>(r.body);
  const file = configPath();
  await save({ url, token }, file);
  out.result(
    { url, configPath: file, org: me.org, user: me.user, expiresAt: me.expiresAt, permissions: me.permissions },
    `logged in to ${url} as ${me.user.email ?? me.user.id} (${me.user.role}) of ${me.org.name}\n` +
      `token expires ${me.expiresAt}; saved in ${file}`,
  );
}

interface CurrentToken {
  expiresAt: string;
  user: { id: string; email?: string; role: string };
  org: { id: string; name: string; plan: string };
  permissions: string[];
}
