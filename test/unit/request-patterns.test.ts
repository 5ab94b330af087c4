import { SandboxRequest } from '@api/features/builder/routes.sandbox';
import { PlatformLogsQuery } from '@api/features/deployments/schemas.observe';
import { CreateSecretRequest } from '@api/features/secrets/schemas';
import { CreateTokenRequest } from '@api/features/tokens/schemas';
import { text } from '@api/http/fields';
import { queryInt } from '@api/http/fields';
import { normalizeBaseUrl } from '@shared/ai-providers/base-url';
import { BASE_URL, CreateAiProviderRequest, UpdateAiProviderRequest } from '@shared/ai-providers/schemas';
import { PATH_DOCUMENT_PATTERN, PATH_PATTERN } from '@shared/builder/files';
import { IMAGE_REFERENCE, imageReferenceProblem } from '@shared/images/reference';
import { integerRangePattern } from '@shared/patterns';

/**
 * The patterns the OpenAPI document states must say what the server checks: a value one admits and the other refuses
 * is a client refused for something the document allows (or the reverse). Random inputs come from a fixed seed.
 */
function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const pick = <T>(rnd: () => number, xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;

describe('integerRangePattern', () => {
  it.each([
    [0, 65535],
    [60, 31536000],
    [1, 525600],
    [1, 8760],
    [1, 365],
    [7, 7],
    [9, 10],
    [99, 1001],
  ])('matches exactly the decimals from %i to %i', (lo, hi) => {
    const re = new RegExp(`^${integerRangePattern(lo, hi)}$`);
    const top = Math.min(hi + 1000, 1_100_000);
    for (let n = 0; n <= top; n++) if (re.test(String(n)) !== (n >= lo && n <= hi)) throw new Error(`${n}`);
    for (const n of [hi, hi + 1, lo - 1, 10 * hi]) expect(re.test(String(n))).toBe(n >= lo && n <= hi);
    expect(re.test(`0${lo}`)).toBe(false);
  });
});

describe('token lifetimes', () => {
  const lifetime = (expiresIn: unknown) =>
    CreateTokenRequest.safeParse({ name: 't', scopes: ['audit.read'], expiresIn });
  it('takes a duration within 60 seconds and 365 days, and refuses one outside', () => {
    for (const ok of ['60s', '1m', '1h', '8760h', '525600m', '31536000s', '365d', 60, 31536000])
      expect([ok, lifetime(ok).success]).toEqual([ok, true]);
    for (const bad of ['59s', '0m', '366d', '8761h', '31536001s', '0060s', '1w', 59])
      expect([bad, lifetime(bad).success]).toEqual([bad, false]);
    expect(lifetime('45s').error?.issues[0]?.message).toMatch(/at least 60 seconds, at most 365 days/);
  });
});

describe('image references', () => {
  it('the pattern admits what the parser accepts, and nothing else', () => {
    const parts = ['a', 'b', '0', '9', 'f', 'A', '.', '_', '-', '__', ':', '/', '@', '[', ']', 'sha256', 'localhost'];
    const long = ['docker.io', 'index.docker.io', 'e'.repeat(64), `sha256:${'ab'.repeat(32)}`, '5000', 'x', 'ab12'];
    const rnd = seeded(7);
    let admitted = 0;
    for (let i = 0; i < 100_000; i++) {
      let s = '';
      for (let k = 1 + Math.floor(rnd() * 8); k > 0; k--) s += pick(rnd, rnd() < 0.75 ? parts : long);
      const problem = imageReferenceProblem(s);
      // The one rule the pattern leaves to the description: a name of at most 255 characters.
      if (problem?.includes('longer than 255')) continue;
      const parsed = problem === undefined;
      if (IMAGE_REFERENCE.test(s) !== parsed) throw new Error(`${JSON.stringify(s)}: parser says ${parsed}`);
      if (parsed) admitted++;
    }
    // Enough of both kinds to mean something.
    expect(admitted).toBeGreaterThan(5_000);
  });

  it.each([
    'nginx',
    'nginx:1.27',
    'localhost:5000/team/app:2',
    'Registry.example.com/app',
    `app@sha256:${'a'.repeat(64)}`,
  ])('admits %s', (ref) => expect([IMAGE_REFERENCE.test(ref), imageReferenceProblem(ref)]).toEqual([true, undefined]));

  it.each(['0', 'abc', 'sha256:abc', 'e'.repeat(64), 'App', 'foo.bar_x/baz', 'a:b:c'])('refuses %s', (ref) => {
    expect(IMAGE_REFERENCE.test(ref)).toBe(false);
    expect(imageReferenceProblem(ref)).toBeDefined();
  });
});

describe('AI provider base URLs', () => {
  const create = (baseUrl: string) =>
    CreateAiProviderRequest.safeParse({
      name: 'p',
      kind: 'openai_compatible',
      baseUrl,
      apiKey: 'k',
      defaultModel: 'm',
    });

  it('every URL the pattern admits is one the server parses and keeps', () => {
    const rnd = seeded(11);
    const hosts = ['a', 'api.openai.com', 'x-1.y', '1.2.3.4', '255.255.255.255', '[::1]', '[2001:db8::2:1]', 'b.c0'];
    const ports = ['', ':0', ':80', ':65535'];
    const paths = ['', '/', '/v1', '/v1/', "/a;b=c/@:!$&'()*+,", '/%41%7e', '/./x', '/../y'];
    for (let i = 0; i < 2_000; i++) {
      const url = `${pick(rnd, ['http', 'https'])}://${pick(rnd, hosts)}${pick(rnd, ports)}${pick(rnd, paths)}`;
      expect([url, BASE_URL.test(url), normalizeBaseUrl(url).error]).toEqual([url, true, undefined]);
      expect([url, create(url).success]).toEqual([url, true]);
    }
  });

  it.each([
    'api.openai.com/v1',
    'ftp://a.b',
    'https://user:pw@a.b',
    'https://a.b/v1?x=1',
    'https://a.b#f',
    'http://999.1.1.1',
    'http://a.123',
    'https://a.b:65536',
    'https://a_b.c',
    'https://a b.c',
  ])('refuses %s, with the reason', (url) => {
    expect(BASE_URL.test(url)).toBe(false);
    const result = create(url);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/baseUrl/);
  });

  it('a change names at least one field, and the document says so', () => {
    expect(UpdateAiProviderRequest.safeParse({}).success).toBe(false);
    expect(UpdateAiProviderRequest.meta()?.minProperties).toBe(1);
  });
});

describe('other fields the document now states whole', () => {
  it('secret hosts: DNS names in either case and IP addresses, nothing with a scheme, port, path or zone', () => {
    const hosts = (allowedHosts: string[]) =>
      CreateSecretRequest.safeParse({ name: 's', value: 'v', allowedHosts }).success;
    for (const h of ['github.com', 'GitHub.com', 'git-1.example.org', '1.2.3.4', '::1', '2001:db8::1'])
      expect([h, hosts([h])]).toEqual([h, true]);
    for (const h of ['https://github.com', 'github.com:443', 'github.com/x', 'a_b.com', '-a.com', 'fe80::1%eth0', ''])
      expect([h, hosts([h])]).toEqual([h, false]);
  });

  it("text that is only white space, in JavaScript's sense of it, is refused", () => {
    const t = text(20);
    for (const blank of [' ', '\t\n', '\u00a0', '\u2028', '\ufeff', '\u3000 '])
      expect([blank, t.safeParse(blank).success]).toEqual([blank, false]);
    // Python counts these as white space, JavaScript does not: they are text here, as trim() keeps them.
    for (const kept of ['\u001c', '\u0085', ' x ']) expect([kept, t.safeParse(kept).success]).toEqual([kept, true]);
  });

  it('logs since: Unix seconds or a real ISO 8601 time with its zone', () => {
    const since = (v: string) => PlatformLogsQuery.safeParse({ since: v }).success;
    for (const ok of ['0', '1764000000', '2026-11-23T14:00:00Z', '2024-02-29T00:00:00.5+01:00'])
      expect([ok, since(ok)]).toEqual([ok, true]);
    for (const bad of ['2026-02-30T00:00:00Z', '2026-11-23T14:00Z', '2026-11-23', 'yesterday', '123456789012'])
      expect([bad, since(bad)]).toEqual([bad, false]);
  });

  it('query integers are digits: an empty value or an exponent is refused, not read as 0 or 1000', () => {
    const n = queryInt(0, 100);
    expect(['', '1e2', '12.0', 'x'].map((v) => n.safeParse(v).success)).toEqual([false, false, false, false]);
    expect(n.parse('12')).toBe(12);
    expect(n.parse(12)).toBe(12);
  });

  it('sandbox variables: names the sandbox reserves are refused, as the document says', () => {
    const env = (e: Record<string, string>) => SandboxRequest.safeParse({ runtime: 'node', env: e }).success;
    expect([env({ PORTS: '1' }), env({ SLIPWAYX: '1' }), env({ PORT: '1' }), env({ SLIPWAY_X: '1' })]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect(env({ A: 'a\u0000b' })).toBe(false);
  });
});

describe('builder file paths in the document', () => {
  it('the code-point pattern of the document admits exactly what the server pattern admits', () => {
    const documented = new RegExp(PATH_DOCUMENT_PATTERN, 'u');
    const pool = [
      'a',
      'Z',
      '0',
      '.',
      ' ',
      '/',
      '\\',
      ':',
      '~1',
      'git',
      'GIT',
      '.git',
      '..',
      'C:',
      '\u200b',
      '\u202e',
      '\ufeff',
      '\u0000',
      '\u001f',
      '\u00e9',
      '\u{1f600}',
      '\u{e0001}',
      '\u{e0100}',
      '\u{1d173}',
      '\u{10000}',
    ];
    const rnd = seeded(3);
    let admitted = 0;
    for (let i = 0; i < 50_000; i++) {
      let s = '';
      for (let k = 1 + Math.floor(rnd() * 6); k > 0; k--) s += pick(rnd, pool);
      const server = PATH_PATTERN.test(s);
      if (documented.test(s) !== server) throw new Error(`${JSON.stringify(s)}: the server says ${server}`);
      if (server) admitted++;
    }
    expect(admitted).toBeGreaterThan(2_000);
  });
});
