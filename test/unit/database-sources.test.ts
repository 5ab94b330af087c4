import { randomBytes } from 'node:crypto';

import type Docker from 'dockerode';

import { extractAnswer } from '@activities/database-source';
import { jsonValue, rowCollector, schemaPrompt } from '@shared/database-sources/endpoint';
import { createEndpointResolver, SourceTargetError } from '@shared/database-sources/resolve';
import type { DatabaseSourceRecord } from '@shared/database-sources/types';
import { createCredentialSealer } from '@shared/databases/credentials';

const secretsKey = randomBytes(32).toString('base64');

function resolver(addresses: Record<string, string[]>, allowPrivate = false) {
  return createEndpointResolver({
    secretsKey,
    allowPrivate,
    databases: { get: async () => null },
    databaseCredentials: createCredentialSealer(secretsKey),
    docker: {} as Docker,
    lookup: async (host) =>
      (addresses[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
  });
}

function source(
  r: ReturnType<typeof resolver>,
  host: string,
  over: Partial<DatabaseSourceRecord> = {},
): DatabaseSourceRecord {
  const ids = { _id: 'src-1', orgId: 'org-1' };
  return {
    ...ids,
    projectId: null,
    name: 'n',
    engine: 'postgres',
    databaseId: null,
    host,
    port: 5432,
    database: 'app',
    user: 'reader',
    passwordSealed: r.sealPassword(ids, 's3cret'),
    tls: 'verify',
    lastTest: null,
    createdBy: 'u',
    createdAt: new Date(),
    updatedAt: new Date(),
    ...over,
  };
}

describe('database source network rules', () => {
  const names = {
    'db.example.com': ['93.184.216.34'],
    'inside.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'meta.example.com': ['169.254.169.254'],
  };

  it('refuses loopback, private and special addresses, directly or by name, unless private networks are allowed', async () => {
    const r = resolver(names);
    expect(await r.hostRefusal('db.example.com', 5432)).toBeUndefined();
    for (const host of ['127.0.0.1', '10.0.0.5', '::1', 'inside.example.com', 'mixed.example.com', '192.0.2.10'])
      expect(await r.hostRefusal(host, 5432)).toMatch(/address/);
    expect(await r.hostRefusal('10.0.0.5', 5432)).toMatch(/ALLOW_PRIVATE_DATABASE_SOURCES/);
    expect(await r.hostRefusal('nowhere.example.com', 5432)).toMatch(/does not resolve/);
    // Text of the pattern's shape that is no address at all (schemathesis met it as a 500).
    expect(await r.hostRefusal('fEE2:21:639c:C:e3:::3', 5432)).toMatch(
      /neither a host name nor an IPv4 or IPv6 address/,
    );
    const open = resolver(names, true);
    expect(await open.hostRefusal('10.0.0.5', 5432)).toBeUndefined();
    expect(await open.hostRefusal('inside.example.com', 5432)).toBeUndefined();
  });

  it('refuses metadata addresses even where private networks are allowed', async () => {
    const open = resolver(names, true);
    for (const host of ['169.254.169.254', 'meta.example.com', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16'])
      expect(await open.hostRefusal(host, 5432)).toMatch(/metadata|link-local|WireServer|Alibaba/);
  });

  it('pins the checked address for the connection, and keeps the name for TLS', async () => {
    const r = resolver(names);
    const ep = await r.resolve(source(r, 'db.example.com'));
    expect(ep).toMatchObject({ host: 'db.example.com', address: '93.184.216.34', password: 's3cret', tls: 'verify' });
    await expect(r.resolve(source(r, 'inside.example.com'))).rejects.toThrow(SourceTargetError);
  });

  it('binds a sealed password to its source: copied onto another, it does not open', async () => {
    const r = resolver(names);
    const s = source(r, 'db.example.com');
    await expect(r.resolve({ ...s, _id: 'src-2' })).rejects.toThrow();
    await expect(r.resolve({ ...s, orgId: 'org-2' })).rejects.toThrow();
  });
});

describe('answers and their caps', () => {
  it('reads the SQL from the answer tool, a fenced block or JSON, and nothing else', () => {
    expect(
      extractAnswer({
        text: '',
        toolCalls: [{ name: 'answer_with_sql', arguments: { sql: 'SELECT 1', explanation: 'one' } }],
      }),
    ).toEqual({ sql: 'SELECT 1', explanation: 'one' });
    expect(extractAnswer({ text: 'Here:\n```sql\nSELECT 2\n```', toolCalls: [] })?.sql).toBe('SELECT 2');
    expect(extractAnswer({ text: '{"sql":"SELECT 3","explanation":"x"}', toolCalls: [] })?.sql).toBe('SELECT 3');
    expect(extractAnswer({ text: 'I cannot help with that.', toolCalls: [] })).toBeUndefined();
  });

  it('stops at the row cap or the byte cap, whichever comes first', () => {
    const rows = rowCollector({ maxRows: 2, maxBytes: 1000 });
    expect([rows.add([1]), rows.add([2]), rows.add([3])]).toEqual([true, true, false]);
    expect(rows.truncatedBy).toBe('rows');
    const bytes = rowCollector({ maxRows: 100, maxBytes: 20 });
    expect(bytes.add(['0123456789'])).toBe(true);
    expect(bytes.add(['0123456789'])).toBe(false);
    expect(bytes.truncatedBy).toBe('bytes');
    expect(bytes.rows).toHaveLength(1);
  });

  it('writes values as JSON carries them', () => {
    expect(jsonValue(Buffer.from([1, 255]))).toBe('\\x01ff');
    expect(jsonValue(10n ** 20n)).toBe('100000000000000000000');
    expect(jsonValue(new Date('2026-01-02T03:04:05Z'))).toBe('2026-01-02T03:04:05.000Z');
    expect(jsonValue([1, null])).toEqual([1, null]);
  });

  it('describes the schema to the model one table per line', () => {
    const text = schemaPrompt({
      truncated: false,
      schemas: [
        {
          name: 'public',
          tables: [
            {
              name: 'orders',
              kind: 'table',
              rowEstimate: 60,
              columns: [
                { name: 'id', type: 'integer', nullable: false, default: null },
                { name: 'customer_id', type: 'integer', nullable: true, default: null },
              ],
              primaryKey: ['id'],
              foreignKeys: [
                {
                  name: 'fk',
                  columns: ['customer_id'],
                  references: { schema: 'public', table: 'customers', columns: ['id'] },
                },
              ],
            },
          ],
        },
      ],
    });
    expect(text).toBe(
      'public.orders (table, ~60 rows): id integer PK, customer_id integer; FK customer_id -> customers(id)',
    );
  });
});
