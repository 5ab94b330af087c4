import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ferretdbBackend, ferretdbBackendSetting } from '@scripts/stack/postgres';
import { StackError } from '@scripts/stack/stack-error';

describe('FERRETDB_BACKEND', () => {
  it('takes either backend by name, and is unset when empty', () => {
    expect(ferretdbBackendSetting(undefined)).toBeUndefined();
    expect(ferretdbBackendSetting('')).toBeUndefined();
    expect(ferretdbBackendSetting('sqlite')).toBe('sqlite');
    expect(ferretdbBackendSetting('postgresql')).toBe('postgresql');
  });

  it('refuses any other value with a line naming the ones it takes', () => {
    expect(() => ferretdbBackendSetting('postgres')).toThrow(StackError);
    expect(() => ferretdbBackendSetting('postgres')).toThrow(
      'FERRETDB_BACKEND is "postgres"; set it to sqlite or postgresql, or leave it unset (PostgreSQL for new data)',
    );
  });
});

describe('the embedded FerretDB’s backend', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-ferretdb-choice-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('is PostgreSQL for new data, in a directory that is empty or not there yet', async () => {
    expect(await ferretdbBackend(dir, undefined)).toEqual({ backend: 'postgresql', why: 'default' });
    expect(await ferretdbBackend(path.join(dir, 'absent'), undefined)).toEqual({
      backend: 'postgresql',
      why: 'default',
    });
  });

  it('stays SQLite where FerretDB already keeps SQLite files, unless the setting says otherwise', async () => {
    await fs.writeFile(path.join(dir, 'slipway.sqlite'), '');
    expect(await ferretdbBackend(dir, undefined)).toEqual({ backend: 'sqlite', why: 'existing data' });
    expect(await ferretdbBackend(dir, 'postgresql')).toEqual({ backend: 'postgresql', why: 'set' });
  });

  it('is what the setting names, whatever the directory holds', async () => {
    expect(await ferretdbBackend(dir, 'sqlite')).toEqual({ backend: 'sqlite', why: 'set' });
  });
});
