import { parseConfig } from '@shared/config';
import { limitRules, limitWords, windowWords } from '@shared/limits';

describe('rate limits in words', () => {
  const rules = limitRules(parseConfig({}));

  it('says every default budget as a person would: how many of what, per whom, per what window', () => {
    const words = Object.fromEntries(
      Object.entries(rules).map(([name, rule]) => [name, limitWords(rule, rule.points)]),
    );
    expect(words).toEqual({
      compatWrites: '20 compatibility API deploys and deletes per organisation per hour',
      compatUploads: '20 zip uploads per organisation per hour',
      compatReads: '60 compatibility API reads per organisation per minute',
      compatAnonymous: '60 compatibility API requests with a missing or refused token per client address per minute',
      platform: '100 platform API requests per token per 15 minutes',
      platformRefused: '100 platform API requests with a missing or refused token per client address per 15 minutes',
      deployCreate: '10 deployment creations per user per 15 minutes',
      entitlements: '120 entitlement lookups per API key per minute',
      mcp: '300 MCP requests per token per 5 minutes',
      hooks: '120 webhook deliveries per client address per minute',
      domainVerification: '3 domain verifications per user per 5 minutes',
    });
  });

  it('says the budget a client address spends before anyone is known as counted per address', () => {
    expect(limitWords(rules.platformRefused, 100, true)).toBe(
      '100 platform API requests with a missing or refused token per client address per 15 minutes',
    );
    expect(limitWords(rules.entitlements, 120, true)).toBe(
      '120 entitlement lookups with a missing or wrong API key per client address per minute',
    );
    expect(limitWords(rules.mcp, 300, true)).toBe(
      '300 MCP requests with a missing or refused token per client address per 5 minutes',
    );
  });

  it('sizes the platform budget of refused tokens like the platform one, unless set on its own', () => {
    expect(limitRules(parseConfig({ RATE_LIMIT_PLATFORM_PER_15MIN: '7' })).platformRefused.points).toBe(7);
    const cfg = parseConfig({ RATE_LIMIT_PLATFORM_PER_15MIN: '7', RATE_LIMIT_PLATFORM_REFUSED_PER_15MIN: '5000' });
    expect([limitRules(cfg).platform.points, limitRules(cfg).platformRefused.points]).toEqual([7, 5000]);
  });

  it('uses the overridden size, in the singular when it is one', () => {
    const cfg = parseConfig({ RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '1' });
    expect(limitWords(limitRules(cfg).deployCreate, 1)).toBe('1 deployment creation per user per 15 minutes');
  });

  it.each([
    [3600, 'hour'],
    [7200, '2 hours'],
    [60, 'minute'],
    [900, '15 minutes'],
    [1, 'second'],
    [90, '90 seconds'],
  ])('a window of %i s is "%s"', (s, words) => {
    expect(windowWords(s)).toBe(words);
  });
});
