import { DeploymentStatus, envNamesOf, Provider } from '@shared/deployments/types';

describe('deployment records', () => {
  it('show the names of sealed environment values, sorted', () => {
    expect(envNamesOf({ envNames: ['B', 'A', 'C'] })).toEqual(['A', 'B', 'C']);
  });

  it('show the names of a record written before sealing from its clear values, never the values', () => {
    expect(envNamesOf({ envVars: { TOKEN: 'abc', API_URL: 'https://x' } })).toEqual(['API_URL', 'TOKEN']);
    // Sealed names win: a record holds one or the other, and the names are what a caller may see.
    expect(envNamesOf({ envNames: ['SEALED'], envVars: { OLD: '1' } })).toEqual(['SEALED']);
    expect(envNamesOf({})).toEqual([]);
  });

  it('never reorders the record it reads', () => {
    const record = { envNames: ['B', 'A'] };
    envNamesOf(record);
    expect(record.envNames).toEqual(['B', 'A']);
  });

  it('know their statuses and providers, and nothing else', () => {
    expect(DeploymentStatus.safeParse('running').success).toBe(true);
    expect(DeploymentStatus.safeParse('destroyed').success).toBe(false);
    expect(Provider.safeParse('engine_local').success).toBe(true);
    expect(Provider.safeParse('ENGINE_LOCAL').success).toBe(false);
  });
});
