import { ferretdbBackend } from '@scripts/stack/postgres';
import { StackError } from '@scripts/stack/stack-error';

describe('FERRETDB_BACKEND', () => {
  it('is SQLite when unset or empty, and takes either backend by name', () => {
    expect(ferretdbBackend(undefined)).toBe('sqlite');
    expect(ferretdbBackend('')).toBe('sqlite');
    expect(ferretdbBackend('sqlite')).toBe('sqlite');
    expect(ferretdbBackend('postgresql')).toBe('postgresql');
  });

  it('refuses any other value with a line naming the ones it takes', () => {
    expect(() => ferretdbBackend('postgres')).toThrow(StackError);
    expect(() => ferretdbBackend('postgres')).toThrow(
      'FERRETDB_BACKEND is "postgres"; set it to sqlite or postgresql (or leave it unset for sqlite)',
    );
  });
});
