import { randomBytes } from 'node:crypto';

import { AppError } from '@shared/errors';
import { createEnvSealer } from '@shared/secrets/deployment-env';

const hexKey = randomBytes(32).toString('hex');
const d1 = { _id: 'd1', orgId: 'org1' };

describe('deployment environment sealer', () => {
  it('seals the map bound to its deployment and opens it there only', () => {
    const sealer = createEnvSealer(hexKey);
    const envSealed = sealer.seal(d1, { DATABASE_URL: 'postgres://u:p@db/x', A: '1' })!;
    expect(JSON.stringify(envSealed)).not.toContain('postgres');
    expect(sealer.open({ ...d1, envSealed })).toEqual({ DATABASE_URL: 'postgres://u:p@db/x', A: '1' });
    expect(() => sealer.open({ _id: 'd2', orgId: 'org1', envSealed })).toThrow();
    expect(() => sealer.open({ _id: 'd1', orgId: 'org2', envSealed })).toThrow();
  });

  it('takes the key as base64 as well as hex', () => {
    const hex = createEnvSealer(hexKey);
    const base64 = createEnvSealer(Buffer.from(hexKey, 'hex').toString('base64'));
    expect(base64.open({ ...d1, envSealed: hex.seal(d1, { A: '1' }) })).toEqual({ A: '1' });
  });

  it('stores nothing for an empty map, with or without a key', () => {
    expect(createEnvSealer(hexKey).seal(d1, {})).toBeUndefined();
    expect(createEnvSealer(undefined).seal(d1, {})).toBeUndefined();
    expect(createEnvSealer(undefined).open(d1)).toEqual({});
  });

  it('refuses to store values without a key, saying what to do, rather than store them in the clear', () => {
    const sealer = createEnvSealer(undefined);
    expect(() => sealer.seal(d1, { A: '1' })).toThrow(AppError);
    expect(() => sealer.seal(d1, { A: '1' })).toThrow(
      'This server has no SECRETS_KEY, so it cannot store environment values safely; deploy without envVars or ask the operator to set SECRETS_KEY.',
    );
    // A key of the wrong length is no key.
    expect(() => createEnvSealer('c2hvcnQ=').seal(d1, { A: '1' })).toThrow(AppError);
  });

  it('says why a sealed map cannot be opened without the key', () => {
    const envSealed = createEnvSealer(hexKey).seal(d1, { A: '1' })!;
    expect(() => createEnvSealer(undefined).open({ ...d1, envSealed })).toThrow(
      'SECRETS_KEY is not set: the environment values of this deployment cannot be opened',
    );
  });

  it('reads the values of a record written before sealing as they are, as a copy', () => {
    const envVars = { LEGACY: 'yes' };
    const opened = createEnvSealer(undefined).open({ ...d1, envVars });
    expect(opened).toEqual({ LEGACY: 'yes' });
    opened.LEGACY = 'changed';
    expect(envVars.LEGACY).toBe('yes');
  });
});
