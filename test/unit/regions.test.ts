import { parseConfig } from '@shared/config';
import { Region, regionCatalog, regionProblem, regionsOf } from '@shared/deployments/regions';
import { PROVIDERS } from '@shared/deployments/types';

describe('region catalog', () => {
  it('gives engine_local the server’s region and the cloud providers none, for every provider', () => {
    expect(regionCatalog('eu-west')).toEqual({
      engine_local: ['eu-west'],
      cloud_a_run: [],
      cloud_b_container_apps: [],
      cloud_c_ecs_fargate: [],
    });
    expect(Object.keys(regionCatalog('local')).sort()).toEqual([...PROVIDERS].sort());
    expect(regionsOf('engine_local', 'local')).toEqual(['local']);
  });

  it('names the regions a provider has when it lacks the one asked, and says why a cloud provider has none', () => {
    expect(regionProblem('engine_local', 'local', 'local')).toBeUndefined();
    expect(regionProblem('engine_local', 'us-east', 'eu-west')).toBe(
      'engine_local has no region us-east on this server; its regions: eu-west',
    );
    const cloud = regionProblem('cloud_a_run', 'us-east', 'local');
    expect(cloud).toMatch(
      /^cloud_a_run has no regions for this organisation \(a cloud provider’s regions are those its credentials name/,
    );
    expect(cloud).toContain('no region us-east');
    // With credentials, the regions they name.
    expect(regionProblem('cloud_a_run', 'us-east1', 'local', { cloud_a_run: ['us-east1'] })).toBeUndefined();
    expect(regionProblem('cloud_a_run', 'us-west1', 'local', { cloud_a_run: ['us-east1', 'europe-west1'] })).toBe(
      'cloud_a_run has no region us-west1 for this organisation; its regions: us-east1, europe-west1',
    );
  });

  it('takes only DNS-label-like names, for requests and for ENGINE_REGION alike', () => {
    for (const ok of ['local', 'eu-west-1', 'a', '9x']) expect([ok, Region.safeParse(ok).success]).toEqual([ok, true]);
    for (const bad of ['', 'EU', '-a', 'a-', 'a_b', 'a.b', 'a b', 'x'.repeat(64), '../etc'])
      expect([bad, Region.safeParse(bad).success]).toEqual([bad, false]);
    expect(parseConfig({}).ENGINE_REGION).toBe('local');
    expect(parseConfig({ ENGINE_REGION: 'eu-west' }).ENGINE_REGION).toBe('eu-west');
    expect(() => parseConfig({ ENGINE_REGION: 'Eu West' })).toThrow(/^invalid ENGINE_REGION="Eu West": lowercase/);
  });
});
