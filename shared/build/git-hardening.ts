import type { ResolvedTarget } from '../net-guard';

/** The checked address as curl's resolve list and a URL's host take it (an IPv6 literal in brackets). */
export const pinnedAddress = (target: Pick<ResolvedTarget, 'address' | 'family'>) =>
  target.family === 6 ? `[${target.address}]` : target.address;

/**
 * How the worker runs git against a host a tenant named, for a build's clone and a builder session's push or import
 * alike: `args` go before git's command, `env` is its whole environment, `scrub` takes the token out of anything git
 * printed.
 *
 * - The host was resolved and checked once (`target`); curl is told that address, so a name that resolves to a
 *   public address for the check and a private one for the connection (DNS rebinding) gets nowhere.
 * - A redirect could lead a vetted host to one nobody checked (a private one, or the cloud metadata service, which no
 *   setting opens): never followed. Local transports (file, ext) are never a source.
 * - HOME is the scratch directory and the system config is skipped: no user's global config, credential helpers or
 *   hooks; git never prompts.
 * - The token travels as an HTTP header in git's environment (`x-access-token:<token>`, the basic auth GitHub, GitLab
 *   and Gitea all accept), never in its arguments, where any process on the host could read it.
 */
export function hardenedGit(opts: { target: ResolvedTarget; home: string; token?: string | undefined }) {
  const { target } = opts;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: opts.home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    GIT_CONFIG_COUNT: '0',
  };
  const secrets: string[] = [];
  if (opts.token) {
    const basic = Buffer.from(`x-access-token:${opts.token}`).toString('base64');
    secrets.push(opts.token, basic);
    Object.assign(env, {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
  }
  const args = [
    '-c',
    'http.followRedirects=false',
    '-c',
    'protocol.file.allow=never',
    '-c',
    'protocol.ext.allow=never',
    '-c',
    `http.curloptResolve=${target.host}:${target.port}:${pinnedAddress(target)}`,
  ];
  const scrub = (text: string) => secrets.reduce((t, s) => t.split(s).join('***'), text);
  return { args, env, scrub };
}
