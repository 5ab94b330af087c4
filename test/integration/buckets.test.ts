import {
  DeleteBucketCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { connectAgent } from '../helpers/mcp';

interface BucketBody {
  data: {
    id: string;
    name: string;
    s3Name: string;
    projectId: string | null;
    usage?: { objects: number; bytes: number; measuredAt: string; partial: boolean };
  };
}
interface NewKeyBody {
  data: {
    keyId: string;
    accessKeyId: string;
    secretAccessKey: string;
    endpoint: string;
    bucket: string;
    region: string;
    forcePathStyle: boolean;
  };
}

/** What an S3 client holding `key` gets for a put then a get in `bucket`: the body read back, or the error's name. */
async function tryPutGet(h: Harness, key: { accessKeyId: string; secretAccessKey: string }, bucket: string) {
  const s3 = new S3Client({
    endpoint: h.config.S3_ENDPOINT,
    region: h.config.S3_REGION,
    forcePathStyle: true,
    credentials: key,
  });
  try {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'probe.txt', Body: `hello ${bucket}` }));
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'probe.txt' }));
    return await got.Body!.transformToString();
  } catch (err) {
    return (err as Error).name;
  } finally {
    s3.destroy();
  }
}

/** Can the key read an object that is there? The object's text, or the error's name. */
async function tryGet(h: Harness, key: { accessKeyId: string; secretAccessKey: string }, bucket: string, k: string) {
  const s3 = new S3Client({
    endpoint: h.config.S3_ENDPOINT,
    region: h.config.S3_REGION,
    forcePathStyle: true,
    credentials: key,
  });
  try {
    return await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key: k }))).Body!.transformToString();
  } catch (err) {
    return (err as Error).name;
  } finally {
    s3.destroy();
  }
}

/** Buckets against the real MinIO: records, the real buckets, keys that open one bucket only, and the MCP tools. */
describe('buckets', () => {
  let h: Harness;
  const mcpClients: Client[] = [];
  beforeAll(async () => {
    h = await startHarness('buckets', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
  });
  afterAll(async () => {
    for (const c of mcpClients) await c.close().catch(() => undefined);
    await h?.stop();
  });

  it('creates, lists, reads (with usage) and deletes a bucket; a non-empty one only with force', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const made = await api.post<BucketBody>('/platform/buckets', { name: 'photos' });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ name: 'photos', projectId: null });
    expect(made.body.data.s3Name).toMatch(/^u-[0-9a-f]{8}-photos$/);
    const id = made.body.data.id;

    expect((await api.post('/platform/buckets', { name: 'photos' })).status).toBe(409);
    const bad = await api.post<{ error: { message: string } }>('/platform/buckets', { name: 'Bad_Name' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('lower-case');
    expect((await api.post('/platform/buckets', { name: 'ab' })).status).toBe(400);

    const list = await api.get<{ data: { buckets: { id: string }[]; total: number } }>('/platform/buckets');
    expect(list.body.data).toMatchObject({ total: 1, buckets: [expect.objectContaining({ id })] });

    const empty = await api.get<BucketBody>(`/platform/buckets/${id}`);
    expect(empty.body.data.usage).toMatchObject({ objects: 0, bytes: 0, partial: false });

    // An object written with the service's own client: a non-empty bucket is refused without force.
    await h.s3.send(new PutObjectCommand({ Bucket: made.body.data.s3Name, Key: 'a.txt', Body: '12345' }));
    const refused = await api.del<{ message: string }>(`/platform/buckets/${id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('holds objects');
    expect(refused.body.message).toContain('force=true');

    const forced = await api.del(`/platform/buckets/${id}?force=true`);
    expect(forced.status).toBe(200);
    expect((await api.get(`/platform/buckets/${id}`)).status).toBe(404);
    expect((await api.get<{ data: { total: number } }>('/platform/buckets')).body.data.total).toBe(0);
  });

  it('answers 404 for another organisation’s bucket, and counts buckets against the plan', async () => {
    const a = client(h, (await h.newOrg('free')).token);
    const b = client(h, (await h.newOrg('pro')).token);
    const mine = await a.post<BucketBody>('/platform/buckets', { name: 'mine' });
    for (const r of [
      await b.get(`/platform/buckets/${mine.body.data.id}`),
      await b.del(`/platform/buckets/${mine.body.data.id}`),
      await b.post(`/platform/buckets/${mine.body.data.id}/credentials`, {}),
      await b.get(`/platform/buckets/${mine.body.data.id}/credentials`),
    ])
      expect(r.status).toBe(404);
    await a.post('/platform/buckets', { name: 'two' });
    await a.post('/platform/buckets', { name: 'three' });
    const over = await a.post<{ message: string }>('/platform/buckets', { name: 'four' });
    expect(over.status).toBe(429);
    expect(over.body.message).toContain('plan allows 3 buckets');
  });

  it('gives keys that open their bucket only, shows the secret once, and revokes at once', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const other = client(h, (await h.newOrg('pro')).token);
    const mine = (await api.post<BucketBody>('/platform/buckets', { name: 'data' })).body.data;
    const sibling = (await api.post<BucketBody>('/platform/buckets', { name: 'sibling' })).body.data;
    const foreign = (await other.post<BucketBody>('/platform/buckets', { name: 'data' })).body.data;
    // Objects to read in each bucket, put there by the service.
    for (const b of [sibling.s3Name, foreign.s3Name, h.config.S3_BUCKET])
      await h.s3.send(new PutObjectCommand({ Bucket: b, Key: 'secret.txt', Body: 'not yours' }));

    const made = await api.post<NewKeyBody>(`/platform/buckets/${mine.id}/credentials`, { name: 'uploader' });
    expect(made.status).toBe(201);
    const key = made.body.data;
    expect(key).toMatchObject({ keyId: key.accessKeyId, bucket: mine.s3Name, endpoint: h.config.S3_ENDPOINT });
    expect(key.secretAccessKey.length).toBeGreaterThanOrEqual(20);
    expect(key.accessKeyId).not.toBe(h.config.S3_ACCESS_KEY_ID);

    expect(await tryPutGet(h, key, mine.s3Name)).toBe(`hello ${mine.s3Name}`);
    for (const b of [sibling.s3Name, foreign.s3Name, h.config.S3_BUCKET]) {
      expect({ b, put: await tryPutGet(h, key, b) }).toEqual({ b, put: 'AccessDenied' });
      expect({ b, get: await tryGet(h, key, b, 'secret.txt') }).toEqual({ b, get: 'AccessDenied' });
    }

    // The bucket's objects, not the bucket itself: listing works; deleting it or opening it with a policy does not.
    const own = new S3Client({
      endpoint: h.config.S3_ENDPOINT,
      region: h.config.S3_REGION,
      forcePathStyle: true,
      credentials: key,
    });
    try {
      expect((await own.send(new ListObjectsV2Command({ Bucket: mine.s3Name }))).KeyCount).toBe(1);
      const publicRead = JSON.stringify({
        Version: '2012-10-17',
        Statement: [
          { Effect: 'Allow', Principal: '*', Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${mine.s3Name}/*`] },
        ],
      });
      await expect(
        own.send(new PutBucketPolicyCommand({ Bucket: mine.s3Name, Policy: publicRead })),
      ).rejects.toMatchObject({
        name: 'AccessDenied',
      });
      await expect(own.send(new DeleteBucketCommand({ Bucket: mine.s3Name }))).rejects.toMatchObject({
        name: 'AccessDenied',
      });
    } finally {
      own.destroy();
    }

    // Listed without the secret, anywhere in the answer.
    const listed = await api.get<{ data: { credentials: Record<string, unknown>[] } }>(
      `/platform/buckets/${mine.id}/credentials`,
    );
    expect(listed.body.data.credentials).toEqual([
      expect.objectContaining({ keyId: key.keyId, name: 'uploader', kind: 'key', deploymentId: null }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(key.secretAccessKey);
    // Nothing of the secret is kept in the record either.
    const stored = await h.db.collection('bucket_credentials').findOne({ _id: key.keyId as never });
    expect(JSON.stringify(stored)).not.toContain(key.secretAccessKey);
    // Nor in the audit trail.
    const trail = await api.get<{ data: { events: { action: string }[] } }>('/platform/audit?limit=50');
    expect(JSON.stringify(trail.body)).not.toContain(key.secretAccessKey);
    expect(trail.body.data.events.map((e) => e.action)).toContain('bucket-credential.create');

    // Another organisation cannot revoke it; its owner can, and the store refuses it within seconds.
    expect((await other.del(`/platform/buckets/${mine.id}/credentials/${key.keyId}`)).status).toBe(404);
    expect((await api.del(`/platform/buckets/${mine.id}/credentials/${key.keyId}`)).status).toBe(200);
    await eventually(
      async () => ((await tryGet(h, key, mine.s3Name, 'probe.txt')) !== `hello ${mine.s3Name}` ? true : undefined),
      'the revoked key refused',
      10_000,
    );
    expect(await tryGet(h, key, mine.s3Name, 'probe.txt')).toMatch(/InvalidAccessKeyId|AccessDenied/);
    expect(
      (await api.get<{ data: { credentials: unknown[] } }>(`/platform/buckets/${mine.id}/credentials`)).body.data
        .credentials,
    ).toEqual([]);
    expect((await api.del(`/platform/buckets/${mine.id}/credentials/${key.keyId}`)).status).toBe(404);

    // Deleting a bucket revokes its keys.
    const second = (await api.post<NewKeyBody>(`/platform/buckets/${mine.id}/credentials`, {})).body.data;
    expect(await tryGet(h, second, mine.s3Name, 'probe.txt')).toBe(`hello ${mine.s3Name}`);
    expect((await api.del(`/platform/buckets/${mine.id}?force=true`)).status).toBe(200);
    const probe = new S3Client({
      endpoint: h.config.S3_ENDPOINT,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: second,
    });
    await expect(
      probe.send(new PutObjectCommand({ Bucket: sibling.s3Name, Key: 'x', Body: 'x' })),
    ).rejects.toMatchObject({ name: expect.stringMatching(/InvalidAccessKeyId|AccessDenied/) });
    probe.destroy();
  });

  it('says plainly when the object store cannot make scoped keys (S3_ADMIN=none)', async () => {
    const other = await startHarness('buckets-nokeys', { S3_ADMIN: 'none' }, { worker: false });
    try {
      const api = client(other, (await other.newOrg('pro')).token);
      const b = (await api.post<BucketBody>('/platform/buckets', { name: 'plain' })).body.data;
      const r = await api.post<{ message: string }>(`/platform/buckets/${b.id}/credentials`, {});
      expect(r.status).toBe(501);
      expect(r.body.message).toContain('not MinIO');
      expect(r.body.message).toContain('no admin API for keys scoped to one bucket');
      expect(
        (await api.get<{ data: { credentials: unknown[] } }>(`/platform/buckets/${b.id}/credentials`)).body.data
          .credentials,
      ).toEqual([]);
      expect((await api.del(`/platform/buckets/${b.id}`)).status).toBe(200);
    } finally {
      await other.stop();
    }
  });

  it('makes, lists and revokes keys and buckets through MCP, as an agent calls the tools', async () => {
    const org = await h.newOrg('pro');
    const { client: c, call } = await connectAgent(h.baseUrl, org.token, 'buckets-test');
    mcpClients.push(c);
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'list_buckets',
        'create_bucket',
        'delete_bucket',
        'create_bucket_credential',
        'list_bucket_credentials',
        'revoke_bucket_credential',
        'link_bucket',
        'unlink_bucket',
      ]),
    );

    const made = await call('create_bucket', { name: 'agent-files' });
    expect(made.isError).toBe(false);
    const bucketId = made.s.bucket.id as string;
    expect((await call('list_buckets', {})).s).toMatchObject({ total: 1 });
    const key = await call('create_bucket_credential', { bucketId, name: 'agent' });
    expect(key.isError).toBe(false);
    expect(await tryPutGet(h, key.s.credential, made.s.bucket.s3Name)).toBe(`hello ${made.s.bucket.s3Name}`);
    const listed = await call('list_bucket_credentials', { bucketId });
    expect(listed.s.credentials).toEqual([expect.objectContaining({ keyId: key.s.credential.keyId })]);
    expect(listed.text).not.toContain(key.s.credential.secretAccessKey);
    expect((await call('revoke_bucket_credential', { bucketId, keyId: key.s.credential.keyId })).isError).toBe(false);
    const notEmpty = await call('delete_bucket', { bucketId });
    expect(notEmpty.isError).toBe(true);
    expect(notEmpty.text).toContain('holds objects');
    expect((await call('delete_bucket', { bucketId, force: true })).isError).toBe(false);
    expect((await call('list_buckets', {})).s).toMatchObject({ total: 0 });
  });
});
