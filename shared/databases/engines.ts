/**
 * The database engines an organisation may run beside its deployments, and what every layer (api, workflows,
 * activities) needs to know of each: port, credentials, connection URL, dump format. Pure and free of Node built-ins,
 * so workflow code may import it too (but never call `generateCredentials` there: a password is random).
 */
export const DATABASE_ENGINES = ['postgresql', 'mariadb', 'redis'] as const;
export type DatabaseEngine = (typeof DATABASE_ENGINES)[number];

export const isDatabaseEngine = (value: unknown): value is DatabaseEngine =>
  typeof value === 'string' && (DATABASE_ENGINES as readonly string[]).includes(value);

export interface DatabaseCredentials {
  user: string;
  password: string;
  /** The database's name; Redis's logical database number. */
  database: string;
}

/**
 * 43 characters of the URL-safe base64 alphabet (258 random bits): nothing a URL, a shell or a configuration file has
 * to escape. Each character takes 6 bits of one random byte, so every character is equally likely.
 */
const PASSWORD_LENGTH = 43;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function randomPassword(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(PASSWORD_LENGTH));
  return Array.from(bytes, (b) => ALPHABET[b & 63]).join('');
}

/** The user and database each engine's image makes on first start (Redis has one user, `default`, and database 0). */
const DEFAULT_NAMES: Record<DatabaseEngine, { user: string; database: string }> = {
  postgresql: { user: 'app', database: 'app' },
  mariadb: { user: 'app', database: 'app' },
  redis: { user: 'default', database: '0' },
};

export function generateCredentials(engine: DatabaseEngine): DatabaseCredentials {
  checkEngine(engine);
  return { ...DEFAULT_NAMES[engine], password: randomPassword() };
}

export const ENGINE_PORT: Record<DatabaseEngine, number> = { postgresql: 5432, mariadb: 3306, redis: 6379 };

/** The variable a deployment linked to the database gets its connection URL in, unless it names another. */
export const DEFAULT_ENV_NAME: Record<DatabaseEngine, string> = {
  postgresql: 'DATABASE_URL',
  mariadb: 'DATABASE_URL',
  redis: 'REDIS_URL',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isDatabaseId = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** Database IDs are lower-case UUIDs: nothing else becomes a host name, a container name or a label. */
export function checkDatabaseId(databaseId: string): void {
  if (!isDatabaseId(databaseId)) throw new TypeError('a database ID must be a lower-case UUID (8-4-4-4-12 hex digits)');
}

/**
 * The name the database answers to on its organisation's network: stable for its life, so a deployment's connection
 * URL stays right across restarts and restores. 39 characters, within DNS's 63 per label.
 */
/** The database's container: the api finds it there to query a managed database added as a source. */
export function databaseContainerName(databaseId: string): string {
  checkDatabaseId(databaseId);
  return `slipway-db-${databaseId}`;
}

export function databaseHost(databaseId: string): string {
  checkDatabaseId(databaseId);
  return `db-${databaseId}`;
}

const SCHEME: Record<DatabaseEngine, string> = { postgresql: 'postgresql', mariadb: 'mysql', redis: 'redis' };

/** `postgresql://app:…@db-…:5432/app`, `mysql://…:3306/app`, `redis://default:…@db-…:6379/0`: what apps' drivers take. */
export function connectionUrl(engine: DatabaseEngine, host: string, creds: DatabaseCredentials): string {
  checkEngine(engine);
  const e = encodeURIComponent;
  return `${SCHEME[engine]}://${e(creds.user)}:${e(creds.password)}@${host}:${ENGINE_PORT[engine]}/${e(creds.database)}`;
}

export interface DumpFormat {
  contentType: string;
  /** The file name's ending a download of the dump gets. */
  extension: string;
  /** What makes it, and so what can load it again. */
  tool: string;
}

/** Each engine's own consistent dump, as the backup stores it. */
export const DUMP_FORMAT: Record<DatabaseEngine, DumpFormat> = {
  postgresql: { contentType: 'application/vnd.postgresql.custom-dump', extension: 'pgdump', tool: 'pg_dump -Fc' },
  mariadb: { contentType: 'application/sql', extension: 'sql', tool: 'mariadb-dump --single-transaction' },
  redis: { contentType: 'application/vnd.redis.rdb', extension: 'rdb', tool: 'Redis RDB snapshot' },
};

function checkEngine(engine: DatabaseEngine): void {
  if (!isDatabaseEngine(engine)) throw new TypeError(`a database engine is one of ${DATABASE_ENGINES.join(', ')}`);
}
