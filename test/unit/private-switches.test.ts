import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { baseUrlRefusal } from '@shared/ai-providers/base-url';
import { cloneRepository } from '@shared/build/git';
import { registryRefusal } from '@shared/images/registry-guard';
import type { LookupAll } from '@shared/net-guard';

/** A resolver that answers from a table, as a DNS server under the attacker's control would. */
const fakeDns =
  (table: Record<string, string[]>): LookupAll =>
  async (host) =>
    (table[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

/**
 * Every caller that honours an ALLOW_PRIVATE_* switch, with the switch on: loopback and private networks are open
 * (development), link-local and cloud metadata addresses are not.
 */
describe('the ALLOW_PRIVATE_* switches never open metadata', () => {
  const METADATA = ['169.254.169.254', '[fd00:ec2::254]', '100.100.100.200', '[fe80::1]'];

  it('Git (ALLOW_PRIVATE_GIT_HOSTS): the clone is refused before git runs', async () => {
    const dest = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-switch-'));
    try {
      for (const host of METADATA) {
        const lines: string[] = [];
        const err = await cloneRepository({
          url: `http://${host}/latest/meta-data.git`,
          dest,
          maxBytes: 1024,
          allowPrivateHosts: true,
          signal: AbortSignal.timeout(30_000),
          log: (l) => lines.push(l),
        }).catch((e: unknown) => e);
        expect(err).toMatchObject({ name: 'GitError', message: expect.stringMatching(/metadata|link-local/) });
        expect((err as Error).message).not.toMatch(/ALLOW_PRIVATE_GIT_HOSTS is off/);
        // Nothing was cloned, nothing was even started.
        expect(await fs.readdir(dest)).toEqual([]);
      }
    } finally {
      await fs.rm(dest, { recursive: true, force: true });
    }
  });

  it('registries (ALLOW_PRIVATE_REGISTRIES): a metadata host is refused, a private one allowed', async () => {
    for (const host of METADATA)
      expect(await registryRefusal({ registryHost: host }, { allowPrivateRegistries: true })).toMatch(
        /images from the registry .* are refused: .*(metadata|link-local)/,
      );
    expect(await registryRefusal({ registryHost: '127.0.0.1:5000' }, { allowPrivateRegistries: true })).toBe(undefined);
    expect(await registryRefusal({ registryHost: '127.0.0.1:5000' }, { allowPrivateRegistries: false })).toMatch(
      /loopback/,
    );
  });

  it('AI providers (ALLOW_PRIVATE_AI_PROVIDERS): a metadata baseUrl is refused without pointing at the switch', async () => {
    for (const host of METADATA) {
      const reason = await baseUrlRefusal(`http://${host}/v1`, { allowPrivate: true });
      expect(reason).toMatch(/metadata|link-local/);
      expect(reason).not.toMatch(/ALLOW_PRIVATE_AI_PROVIDERS/);
    }
    const lookup = fakeDns({ 'models.test': ['10.0.0.9', '169.254.169.254'], 'lan.test': ['10.0.0.9'] });
    expect(await baseUrlRefusal('http://models.test/v1', { allowPrivate: true, lookup })).toMatch(/169\.254\.169\.254/);
    expect(await baseUrlRefusal('http://lan.test/v1', { allowPrivate: true, lookup })).toBeUndefined();
  });
});
