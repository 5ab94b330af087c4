import {
  checkDatabaseId,
  connectionUrl,
  DATABASE_ENGINES,
  databaseHost,
  DEFAULT_ENV_NAME,
  DUMP_FORMAT,
  ENGINE_PORT,
  generateCredentials,
  isDatabaseEngine,
} from '@shared/databases/engines';

const ID = '0b6f1c8e-3d2a-4f5b-9c7d-1e2f3a4b5c6d';

describe('database engines', () => {
  it('makes credentials with a long URL-safe random password, user app (Redis: default) and database app (Redis: 0)', () => {
    expect(generateCredentials('postgresql')).toMatchObject({ user: 'app', database: 'app' });
    expect(generateCredentials('mariadb')).toMatchObject({ user: 'app', database: 'app' });
    expect(generateCredentials('redis')).toMatchObject({ user: 'default', database: '0' });
    const passwords = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { password } = generateCredentials('postgresql');
      expect(password).toMatch(/^[A-Za-z0-9_-]{32,}$/);
      passwords.add(password);
    }
    expect(passwords.size).toBe(200);
    // Every character of the alphabet turns up: no bias that leaves part of it out.
    expect(new Set([...passwords].join('')).size).toBe(64);
  });

  it('refuses an engine it does not know', () => {
    expect(() => generateCredentials('mongodb' as never)).toThrow(/postgresql, mariadb, redis/);
    expect(isDatabaseEngine('redis')).toBe(true);
    expect(isDatabaseEngine('Redis')).toBe(false);
    expect(DATABASE_ENGINES).toEqual(['postgresql', 'mariadb', 'redis']);
  });

  it('names each engine’s port and the variable an app reads its URL from', () => {
    expect(ENGINE_PORT).toEqual({ postgresql: 5432, mariadb: 3306, redis: 6379 });
    expect(DEFAULT_ENV_NAME).toEqual({ postgresql: 'DATABASE_URL', mariadb: 'DATABASE_URL', redis: 'REDIS_URL' });
  });

  it('gives a database a stable host name on its network, from a lower-case UUID only', () => {
    expect(databaseHost(ID)).toBe(`db-${ID}`);
    expect(databaseHost(ID)).toBe(databaseHost(ID));
    for (const bad of [ID.toUpperCase(), `${ID}.evil`, '../x', '', 'db', `${ID} `])
      expect(() => databaseHost(bad)).toThrow(/lower-case UUID/);
    expect(() => checkDatabaseId(ID)).not.toThrow();
  });

  it('builds the connection URL each engine’s drivers take, with every part encoded', () => {
    const host = databaseHost(ID);
    const creds = { user: 'app', password: 'p-w_1', database: 'app' };
    expect(connectionUrl('postgresql', host, creds)).toBe(`postgresql://app:p-w_1@${host}:5432/app`);
    expect(connectionUrl('mariadb', host, creds)).toBe(`mysql://app:p-w_1@${host}:3306/app`);
    expect(connectionUrl('redis', host, { user: 'default', password: 'x', database: '0' })).toBe(
      `redis://default:x@${host}:6379/0`,
    );
    const odd = connectionUrl('postgresql', host, { user: 'a@b', password: 'p:/?#@%', database: 'd/b' });
    expect(odd).toBe(`postgresql://a%40b:p%3A%2F%3F%23%40%25@${host}:5432/d%2Fb`);
    const parsed = new URL(odd);
    expect([decodeURIComponent(parsed.username), decodeURIComponent(parsed.password), parsed.hostname]).toEqual([
      'a@b',
      'p:/?#@%',
      host,
    ]);
    const generated = generateCredentials('redis');
    expect(new URL(connectionUrl('redis', host, generated)).password).toBe(generated.password);
  });

  it('names each engine’s dump format', () => {
    expect(DUMP_FORMAT.postgresql.tool).toMatch(/pg_dump -Fc/);
    expect(DUMP_FORMAT.mariadb.tool).toMatch(/mariadb-dump --single-transaction/);
    expect(DUMP_FORMAT.redis.tool).toMatch(/RDB/);
    for (const e of DATABASE_ENGINES) expect(DUMP_FORMAT[e].extension).toMatch(/^[a-z]+$/);
  });
});
