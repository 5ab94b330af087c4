import { hardenedGit, pinnedAddress } from '@shared/build/git-hardening';

const v4 = { host: 'git.example.com', port: 443, address: '93.184.216.34', family: 4 as const };
const v6 = { host: 'git.example.com', port: 8443, address: '2606:2800:220:1::1', family: 6 as const };

describe('git run against a tenant’s host', () => {
  it('pins curl to the checked address, follows no redirect and refuses local transports', () => {
    const { args } = hardenedGit({ target: v4, home: '/scratch/a' });
    // Every argument is half of a `-c key=value` pair: read them as the config git runs with.
    const config: Record<string, string> = {};
    for (let i = 0; i < args.length; i += 2) {
      expect(args[i]).toBe('-c');
      const [key, value] = args[i + 1]!.split('=');
      config[key!] = value!;
    }
    expect(config).toEqual({
      'http.followRedirects': 'false',
      'protocol.file.allow': 'never',
      'protocol.ext.allow': 'never',
      'http.curloptResolve': 'git.example.com:443:93.184.216.34',
    });
  });

  it('writes an IPv6 address in brackets, as curl and a URL’s host take it', () => {
    expect(pinnedAddress(v6)).toBe('[2606:2800:220:1::1]');
    expect(pinnedAddress(v4)).toBe('93.184.216.34');
    expect(hardenedGit({ target: v6, home: '/h' }).args.at(-1)).toBe(
      'http.curloptResolve=git.example.com:8443:[2606:2800:220:1::1]',
    );
  });

  it('gives git no config, prompt or credential helper of the host, and no token when none is given', () => {
    const { env } = hardenedGit({ target: v4, home: '/scratch/a' });
    expect(env).toEqual({
      PATH: process.env.PATH,
      HOME: '/scratch/a',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: 'true',
      GIT_CONFIG_COUNT: '0',
    });
  });

  it('sends the token as a header from the environment, never in the arguments, and scrubs it from output', () => {
    const token = 'ghp_s3cr3tT0ken';
    const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
    const git = hardenedGit({ target: v4, home: '/h', token });
    expect(git.env).toMatchObject({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.extraHeader',
      GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
    });
    expect(git.args.join(' ')).not.toContain(token);
    expect(git.args.join(' ')).not.toContain(basic);
    expect(git.scrub(`fatal: ${token} and ${basic} twice ${token}`)).toBe('fatal: *** and *** twice ***');
    expect(hardenedGit({ target: v4, home: '/h' }).scrub(`left ${token}`)).toBe(`left ${token}`);
  });
});
