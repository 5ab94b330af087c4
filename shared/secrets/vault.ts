import { randomUUID } from 'node:crypto';

import { secretsKeyBytes } from '../config';
import { isDuplicateKey } from '../db/mongo';
import type { SecretEnvironment, SecretRecord, SecretStore } from '../db/secrets-store';
import { AppError } from '../errors';
import { createSecretBox, type SecretBox } from './box';

/** What reads show of a secret: never its value. */
export type SecretSummary = Omit<SecretRecord, 'value'>;

/**
 * The organisation's vault: values are sealed before they reach MongoDB and opened only where they are used
 * (a worker cloning a private repository). Without a key the vault refuses to work rather than store plain text.
 */
export function createVault(deps: { store: SecretStore; key: string | undefined }) {
  const { store } = deps;
  let box: SecretBox | undefined;
  const sealer = (): SecretBox => {
    const key = deps.key === undefined ? undefined : secretsKeyBytes(deps.key);
    if (!key) throw new Error('SECRETS_KEY is not set: the vault cannot encrypt or decrypt secrets');
    box ??= createSecretBox(key);
    return box;
  };
  // The record's identity is authenticated with the value: a sealed value copied onto another record fails to open.
  const aad = (s: Pick<SecretRecord, '_id' | 'orgId'>) => `${s.orgId}/${s._id}`;

  return {
    async create(input: {
      orgId: string;
      userId: string;
      name: string;
      environment: SecretEnvironment;
      value: string;
    }): Promise<SecretSummary> {
      const _id = randomUUID();
      const record: SecretRecord = {
        _id,
        orgId: input.orgId,
        name: input.name,
        environment: input.environment,
        value: sealer().seal(input.value, aad({ _id, orgId: input.orgId })),
        createdBy: input.userId,
        createdAt: new Date(),
      };
      try {
        await store.insert(record);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        throw new AppError(
          'INVALID_REQUEST',
          `A secret named ${input.name} already exists in ${input.environment}; delete it first or use another name.`,
          { name: input.name, environment: input.environment },
          409,
        );
      }
      const { value: _sealed, ...summary } = record;
      return summary;
    },

    list: (orgId: string): Promise<SecretSummary[]> => store.list(orgId),

    async exists(orgId: string, id: string): Promise<boolean> {
      return (await store.get(orgId, id)) !== null;
    },

    remove: (orgId: string, id: string) => store.remove(orgId, id),

    /** The plain value, for the one place that needs it; undefined when the org has no such secret. */
    async reveal(orgId: string, id: string): Promise<string | undefined> {
      const record = await store.get(orgId, id);
      return record ? sealer().open(record.value, aad(record)) : undefined;
    },
  };
}

export type Vault = ReturnType<typeof createVault>;
