import { randomUUID } from 'node:crypto';

import { isDuplicateKey } from '../db/mongo';
import { AppError, DatabaseError } from '../errors';
import type { LookupAll } from '../net-guard';
import { requiredSecretBox } from '../secrets/box';
import { baseUrlRefusal, normalizeBaseUrl } from './base-url';
import type { AiProviderStore } from './store';
import type {
  AiProviderCredentials,
  AiProviderRecord,
  AiProviderSummary,
  CreateAiProvider,
  UpdateAiProvider,
} from './types';

/**
 * An organisation's AI providers: keys are sealed with the vault's box before they reach MongoDB and opened only
 * where a model is called (the worker). Without SECRETS_KEY nothing is stored rather than a key in plain text.
 * Another organisation's provider is simply absent (undefined), so routes answer 404.
 */
export function createAiProviders(deps: {
  store: AiProviderStore;
  secretsKey: string | undefined;
  allowPrivate: boolean;
  lookup?: LookupAll;
}) {
  const { store } = deps;
  const sealer = requiredSecretBox(deps.secretsKey, 'AI provider keys cannot be encrypted or decrypted');
  // The record's identity is authenticated with the key: a sealed key copied onto another provider fails to open.
  const aad = (p: Pick<AiProviderRecord, '_id' | 'orgId'>) => `ai-provider/${p.orgId}/${p._id}`;

  async function checkedBaseUrl(raw: string): Promise<string> {
    const normal = normalizeBaseUrl(raw);
    if (normal.error !== undefined) throw new AppError('INVALID_REQUEST', `${normal.error}.`, { field: 'baseUrl' });
    const refusal = await baseUrlRefusal(normal.url, { allowPrivate: deps.allowPrivate, lookup: deps.lookup });
    if (refusal) throw new AppError('INVALID_REQUEST', `baseUrl refused: ${refusal}.`, { field: 'baseUrl' });
    return normal.url;
  }

  /**
   * A second provider of the same name. MongoDB answers E11000 on insert and update alike; FerretDB 1.24 (SQLite)
   * answers E11000 on insert but an InternalError naming the UNIQUE constraint on update, though the index holds.
   */
  const duplicate = (err: unknown) =>
    isDuplicateKey(err) ||
    (err instanceof DatabaseError && String((err.cause as Error | undefined)?.message).includes('UNIQUE constraint'));

  const nameTaken = (name: string) =>
    new AppError(
      'CONFLICT',
      `An AI provider named ${name} already exists in this organisation; choose another name or change that provider.`,
      { name },
    );

  return {
    async create(orgId: string, input: CreateAiProvider): Promise<AiProviderSummary> {
      const baseUrl = await checkedBaseUrl(input.baseUrl);
      const _id = randomUUID();
      const now = new Date();
      const record: AiProviderRecord = {
        _id,
        orgId,
        name: input.name,
        kind: input.kind,
        baseUrl,
        apiKeySealed: sealer().seal(input.apiKey, aad({ _id, orgId })),
        defaultModel: input.defaultModel,
        ...(input.models?.length ? { models: input.models } : {}),
        enabled: input.enabled ?? true,
        createdAt: now,
        updatedAt: now,
      };
      try {
        await store.insert(record);
      } catch (err) {
        if (duplicate(err)) throw nameTaken(input.name);
        throw err;
      }
      const { apiKeySealed: _sealed, ...summary } = record;
      return summary;
    },

    list: (orgId: string, filter?: { enabledOnly?: boolean }) => store.list(orgId, filter),

    async get(orgId: string, id: string): Promise<AiProviderSummary | undefined> {
      return (await store.get(orgId, id)) ?? undefined;
    },

    /** The provider after the change; undefined when the org has no such provider. */
    async update(orgId: string, id: string, change: UpdateAiProvider): Promise<AiProviderSummary | undefined> {
      const set: Partial<AiProviderRecord> = { updatedAt: new Date() };
      if (change.name !== undefined) set.name = change.name;
      if (change.baseUrl !== undefined) set.baseUrl = await checkedBaseUrl(change.baseUrl);
      if (change.apiKey !== undefined) set.apiKeySealed = sealer().seal(change.apiKey, aad({ _id: id, orgId }));
      if (change.defaultModel !== undefined) set.defaultModel = change.defaultModel;
      if (change.models?.length) set.models = change.models;
      if (change.enabled !== undefined) set.enabled = change.enabled;
      try {
        const found = await store.update(orgId, id, { set, unsetModels: change.models?.length === 0 });
        if (!found) return undefined;
      } catch (err) {
        if (duplicate(err)) throw nameTaken(change.name ?? '');
        throw err;
      }
      return (await store.get(orgId, id)) ?? undefined;
    },

    remove: (orgId: string, id: string) => store.remove(orgId, id),

    /**
     * The provider with its key opened, for the one place that calls it; undefined when the org has no such
     * provider. The caller checks `enabled`: a disabled provider still opens, so a test call can say why it fails.
     */
    async credentials(orgId: string, id: string): Promise<AiProviderCredentials | undefined> {
      const record = await store.getSealed(orgId, id);
      if (!record) return undefined;
      return {
        id: record._id,
        name: record.name,
        kind: record.kind,
        baseUrl: record.baseUrl,
        apiKey: sealer().open(record.apiKeySealed, aad(record)),
        defaultModel: record.defaultModel,
        models: record.models ?? [],
        enabled: record.enabled,
      };
    },
  };
}

export type AiProviders = ReturnType<typeof createAiProviders>;
