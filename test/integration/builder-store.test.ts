import { randomUUID } from 'node:crypto';

import { checkManifest, createBlobStore, pathProblem, toManifest } from '@shared/builder/files';
import { createBuilderStore } from '@shared/builder/store';
import type { SessionRecord } from '@shared/builder/types';
import { parseConfig } from '@shared/config';
import { connectMongo, type Database } from '@shared/db/mongo';
import { createS3Client } from '@shared/s3';

/** The builder's store on the real FerretDB and MinIO of the test stack: what must hold under concurrency does. */
describe('builder store', () => {
  const dbName = `slipway_builder_${randomUUID().slice(0, 8)}`;
  let database: Database;
  let store: ReturnType<typeof createBuilderStore>;

  beforeAll(async () => {
    database = await connectMongo(process.env.MONGODB_URL!, dbName);
    store = createBuilderStore(database.db);
    await store.ensureIndexes();
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  const session = (orgId = randomUUID(), projectId = randomUUID()): Omit<SessionRecord, 'defaultKey'> => ({
    _id: randomUUID(),
    orgId,
    projectId,
    title: 'app',
    createdAt: new Date(),
    createdBy: 'u',
  });
  const file = (path: string) => ({ path, sha256: 'a'.repeat(64), size: 1 });

  it('lets exactly one of 20 concurrent head moves from the same head win, and never loses a checkpoint', async () => {
    const s = session();
    await store.insertSession({ ...s, defaultKey: s._id });
    const first = await store.appendCheckpoint(undefined, {
      sessionId: s._id,
      orgId: s.orgId,
      files: [],
      createdBy: 'u',
      reason: 'save',
    });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        store.appendCheckpoint(first, {
          sessionId: s._id,
          orgId: s.orgId,
          files: [file(`f${i}.txt`)],
          createdBy: 'u',
          reason: 'save',
        }),
      ),
    );
    const winners = results.filter((r) => r !== undefined);
    expect(winners).toHaveLength(1);
    const head = await store.head(s._id);
    expect(head!._id).toBe(winners[0]!._id);
    expect(head!.parent).toBe(first!._id);
    expect((await store.recentCheckpoints(s._id, 10)).map((c) => c._id)).toEqual([head!._id, first!._id]);
  });

  it('makes one default session per project under 10 concurrent get-or-creates', async () => {
    const orgId = randomUUID();
    const projectId = randomUUID();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => store.defaultSession(session(orgId, projectId))),
    );
    const ids = new Set(results.map((r) => r.session._id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    // Other sessions of the project are not defaults and do not collide with each other.
    for (let i = 0; i < 3; i++) {
      const s = session(orgId, projectId);
      await store.insertSession({ ...s, defaultKey: s._id });
    }
  });

  it('lets one of 10 concurrent turns claim a session, names it to the others, and frees it only for its owner', async () => {
    const sessionId = randomUUID();
    const claims = Array.from({ length: 10 }, () => ({
      _id: sessionId,
      turnId: randomUUID(),
      orgId: 'o',
      startedAt: new Date(),
    }));
    const results = await Promise.all(claims.map((c) => store.claimTurn(c)));
    const won = claims.filter((_, i) => results[i] === undefined);
    expect(won).toHaveLength(1);
    for (const r of results.filter((x) => x !== undefined)) expect(r!.turnId).toBe(won[0]!.turnId);

    await store.releaseTurn(sessionId, claims.find((c) => c !== won[0])!.turnId);
    expect((await store.runningTurn(sessionId))?.turnId).toBe(won[0]!.turnId);
    await store.releaseTurn(sessionId, won[0]!.turnId);
    expect(await store.runningTurn(sessionId)).toBeUndefined();
  });

  it('keeps every event of two writers of one turn, numbered 1..n without gaps', async () => {
    const turn = { turnId: randomUUID(), sessionId: randomUUID(), orgId: randomUUID() };
    const a = store.eventWriter(turn);
    const b = store.eventWriter(turn);
    // Each writer appends in order, as a turn's activity does; the two race each other for every seq. (Thirty calls
    // at once on the same writers broke that contract and could lose a race more often than a writer retries.)
    const write = async (w: typeof a, prefix: string) => {
      for (let i = 0; i < 15; i++) await w('message.delta', { text: `${prefix}${i}` });
    };
    await Promise.all([write(a, 'a'), write(b, 'b')]);
    const events = await store.eventsAfter(turn, 0);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(new Set(events.map((e) => e.data.text)).size).toBe(30);
    expect(await store.eventsAfter({ ...turn, orgId: randomUUID() }, 0)).toEqual([]);
    expect((await store.eventsAfter(turn, 28)).map((e) => e.seq)).toEqual([29, 30]);
  });

  it('stores contents by digest per organisation, write-once, and refuses a file over the cap', async () => {
    const blobs = createBlobStore({ s3: createS3Client(parseConfig(process.env)), bucket: process.env.S3_BUCKET! });
    const orgId = randomUUID();
    const bytes = Buffer.from('<h1>héllo</h1>');
    const a = await blobs.put(orgId, bytes);
    const b = await blobs.put(orgId, Buffer.from(bytes));
    expect(a).toEqual(b);
    expect((await blobs.get(orgId, a.sha256)).toString()).toBe('<h1>héllo</h1>');
    expect(await blobs.exists(randomUUID(), a.sha256)).toBe(false);
    await expect(blobs.put(orgId, Buffer.alloc(512 * 1024 + 1))).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
  });

  it('refuses paths that would mean another file elsewhere', () => {
    for (const bad of [
      '',
      '/etc/passwd',
      '../x',
      'a/../../x',
      'a/./b',
      'a//b',
      'a/',
      'a\\b',
      'C:x',
      'a\u0000b',
      'a\nb',
      '.git/config',
      'x'.repeat(513),
    ])
      expect(pathProblem(bad)).toBeDefined();
    for (const good of [
      'index.html',
      'src/app.js',
      '.env.example',
      'a b/c.d',
      'ünïcode/ü.txt',
      '..foo',
      'a/.gitignore',
    ])
      expect(pathProblem(good)).toBeUndefined();
    expect(() => checkManifest(toManifest([file('a'), file('a/b')]))).toThrow(/a is a file/);
  });
});
