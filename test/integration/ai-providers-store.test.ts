import { randomBytes, randomUUID } from 'node:crypto';

import { createAiProviders } from '@shared/ai-providers/providers';
import { createAiProviderStore } from '@shared/ai-providers/store';
import type { AiProviderRecord, CreateAiProvider } from '@shared/ai-providers/types';
import { connectMongo, type Database } from '@shared/db/mongo';
import type { LookupAll } from '@shared/net-guard';

/** AI providers on the real FerretDB of the test stack: keys sealed at rest, names unique per org, orgs apart. */
describe('AI provider store', () => {
  const dbName = `slipway_ai_${randomUUID().slice(0, 8)}`;
  const secretsKey = randomBytes(32).toString('base64');
  let database: Database;
  let providers: ReturnType<typeof createAiProviders>;
  const raw = () => database.db.collection<AiProviderRecord>('ai_providers');

  beforeAll(async () => {
    database = await connectMongo(process.env.MONGODB_URL!, dbName);
    const store = createAiProviderStore(database.db);
    await store.ensureIndexes();
    providers = createAiProviders({ store, secretsKey, allowPrivate: true });
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  const org = () => `org-${randomUUID()}`;
  const input = (over: Partial<CreateAiProvider> = {}): CreateAiProvider => ({
    name: 'openai',
    kind: 'openai_compatible',
    baseUrl: 'http://127.0.0.1:9/v1',
    apiKey: `sk-proj-${randomBytes(24).toString('hex')}`,
    defaultModel: 'gpt-4o-mini',
    ...over,
  });

  it('stores the key sealed: not in the document, not in any read, and opened only by credentials()', async () => {
    const orgId = org();
    const given = input({ baseUrl: 'http://127.0.0.1:9/v1/' });
    const created = await providers.create(orgId, given);

    const doc = await raw().findOne({ _id: created._id });
    expect(JSON.stringify(doc)).not.toContain(given.apiKey);
    expect(doc!.apiKeySealed).toEqual({
      iv: expect.any(String),
      tag: expect.any(String),
      ciphertext: expect.any(String),
    });
    for (const read of [created, await providers.get(orgId, created._id), ...(await providers.list(orgId))])
      expect(JSON.stringify(read)).not.toMatch(new RegExp(`apiKey|${given.apiKey}`));
    expect(created.baseUrl).toBe('http://127.0.0.1:9/v1');

    await expect(providers.credentials(orgId, created._id)).resolves.toMatchObject({
      kind: 'openai_compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: given.apiKey,
      defaultModel: 'gpt-4o-mini',
    });
  });

  it('binds a sealed key to its provider: copied onto another one, it does not open', async () => {
    const orgId = org();
    const a = await providers.create(orgId, input({ name: 'a' }));
    const b = await providers.create(orgId, input({ name: 'b' }));
    const sealedA = (await raw().findOne({ _id: a._id }))!.apiKeySealed;
    await raw().updateOne({ _id: b._id }, { $set: { apiKeySealed: sealedA } });
    await expect(providers.credentials(orgId, b._id)).rejects.toThrow();
  });

  it('keeps names unique in an organisation, on create and on rename, and free across organisations', async () => {
    const orgA = org();
    const orgB = org();
    const first = await providers.create(orgA, input({ name: 'main' }));
    await expect(providers.create(orgA, input({ name: 'main' }))).rejects.toMatchObject({
      code: 'CONFLICT',
      status: 409,
    });
    await expect(providers.create(orgB, input({ name: 'main' }))).resolves.toMatchObject({ name: 'main' });

    const other = await providers.create(orgA, input({ name: 'spare' }));
    await expect(providers.update(orgA, other._id, { name: 'main' })).rejects.toMatchObject({
      code: 'CONFLICT',
      status: 409,
    });
    expect((await providers.get(orgA, other._id))!.name).toBe('spare');
    expect((await providers.list(orgA)).map((p) => p._id).sort()).toEqual([first._id, other._id].sort());
  });

  it('shows another organisation’s provider to nobody else: read, change, key and delete all miss', async () => {
    const owner = org();
    const stranger = org();
    const mine = await providers.create(owner, input({ name: 'private' }));

    await expect(providers.get(stranger, mine._id)).resolves.toBeUndefined();
    await expect(providers.list(stranger)).resolves.toEqual([]);
    await expect(providers.credentials(stranger, mine._id)).resolves.toBeUndefined();
    await expect(
      providers.update(stranger, mine._id, { apiKey: 'sk-stolen', enabled: false }),
    ).resolves.toBeUndefined();
    await expect(providers.remove(stranger, mine._id)).resolves.toBe(false);

    const still = await providers.credentials(owner, mine._id);
    expect(still).toMatchObject({ enabled: true, name: 'private' });
    expect(still!.apiKey).not.toBe('sk-stolen');
  });

  it('changes a provider: a new key seals again, [] removes the model list, a disabled one leaves the enabled list', async () => {
    const orgId = org();
    const p = await providers.create(orgId, input({ name: 'rotating', models: ['gpt-4o', 'o3-mini'] }));
    expect(p.models).toEqual(['gpt-4o', 'o3-mini']);
    const changed = await providers.update(orgId, p._id, { apiKey: 'sk-proj-new-key', models: [], enabled: false });
    expect(changed).toMatchObject({ enabled: false });
    expect(changed!.models).toBeUndefined();
    expect(changed!.updatedAt.getTime()).toBeGreaterThanOrEqual(p.updatedAt.getTime());
    await expect(providers.credentials(orgId, p._id)).resolves.toMatchObject({ apiKey: 'sk-proj-new-key', models: [] });
    await expect(providers.list(orgId, { enabledOnly: true })).resolves.toEqual([]);
    await expect(providers.remove(orgId, p._id)).resolves.toBe(true);
    await expect(providers.get(orgId, p._id)).resolves.toBeUndefined();
  });

  it('refuses a baseUrl on a private address unless private providers are allowed', async () => {
    const strict = createAiProviders({ store: createAiProviderStore(database.db), secretsKey, allowPrivate: false });
    const orgId = org();
    await expect(strict.create(orgId, input({ baseUrl: 'http://127.0.0.1:11434/v1' }))).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      message: expect.stringMatching(/loopback.*ALLOW_PRIVATE_AI_PROVIDERS/),
    });
    // A public-looking name that resolves inside is refused the same way.
    const inside: LookupAll = async () => [{ address: '10.0.0.7', family: 4 }];
    const named = createAiProviders({
      store: createAiProviderStore(database.db),
      secretsKey,
      allowPrivate: false,
      lookup: inside,
    });
    await expect(named.create(orgId, input({ baseUrl: 'https://llm.example.com/v1' }))).rejects.toMatchObject({
      message: expect.stringMatching(/10\.0\.0\.7, a private address/),
    });
    const outside: LookupAll = async () => [{ address: '8.8.8.8', family: 4 }];
    const open = createAiProviders({
      store: createAiProviderStore(database.db),
      secretsKey,
      allowPrivate: false,
      lookup: outside,
    });
    await expect(open.create(orgId, input({ baseUrl: 'https://llm.example.com/v1' }))).resolves.toMatchObject({
      baseUrl: 'https://llm.example.com/v1',
    });
    expect(await raw().countDocuments({ orgId })).toBe(1);
  });
});
