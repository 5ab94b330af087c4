import { randomUUID } from 'node:crypto';

import { isDuplicateKey } from '../db/mongo';
import { AppError } from '../errors';
import { requiredSecretBox } from './box';
import type { SecretEnvironment, SecretRecord, SecretStore } from './store';

/** A secret that may not be sent where a Git source asks; the message says why and what to do. */
export class GitSecretRefusedError extends Error {
  override name = 'GitSecretRefusedError';
}

/**
 * Why secret `s` may not be sent as a Git credential to `url`, or undefined. One rule for the api (which answers
 * 400 at once) and the worker (which checks again before it opens the value).
 */
export function gitSecretRefusal(
  s: Pick<SecretRecord, '_id' | 'environment' | 'allowedHosts'>,
  use: { url: string; environment: SecretEnvironment; allowHttp: boolean },
): string | undefined {
  let url: URL;
  try {
    url = new URL(use.url);
  } catch {
    return 'repoUrl is not a URL';
  }
  if (url.protocol !== 'https:' && !(use.allowHttp && url.protocol === 'http:')) {
    return `a Git token is sent over https:// only, and repoUrl uses ${url.protocol}//; use the repository's https:// URL`;
  }
  if (s.environment !== use.environment) {
    return `the secret ${s._id} belongs to the ${s.environment} vault environment, not ${use.environment}; pass vaultEnvironment "${s.environment}" or use a ${use.environment} secret`;
  }
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (!s.allowedHosts?.length) {
    return `the secret ${s._id} is not bound to any Git host; store it again with allowedHosts: ["${host}"] (POST /platform/secrets)`;
  }
  if (!s.allowedHosts.includes(host)) {
    return `the secret ${s._id} may be sent only to ${s.allowedHosts.join(', ')}, not to ${host}; use a repository on those hosts or a secret bound to ${host}`;
  }
  return undefined;
}

/** What reads show of a secret: never its value. */
export type SecretSummary = Omit<SecretRecord, 'value'>;

/**
 * The organisation's vault: values are sealed before they reach MongoDB and opened only where they are used
 * (a worker cloning a private repository). Without a key the vault refuses to work rather than store plain text.
 */
export function createVault(deps: { store: SecretStore; key: string | undefined }) {
  const { store } = deps;
  const sealer = requiredSecretBox(deps.key, 'the vault cannot encrypt or decrypt secrets');
  // The record's identity is authenticated with the value: a sealed value copied onto another record fails to open.
  const aad = (s: Pick<SecretRecord, '_id' | 'orgId'>) => `${s.orgId}/${s._id}`;

  return {
    async create(input: {
      orgId: string;
      userId: string;
      name: string;
      environment: SecretEnvironment;
      allowedHosts?: string[];
      value: string;
    }): Promise<SecretSummary> {
      const _id = randomUUID();
      const record: SecretRecord = {
        _id,
        orgId: input.orgId,
        name: input.name,
        environment: input.environment,
        ...(input.allowedHosts?.length ? { allowedHosts: input.allowedHosts.map((h) => h.toLowerCase()) } : {}),
        value: sealer().seal(input.value, aad({ _id, orgId: input.orgId })),
        createdBy: input.userId,
        createdAt: new Date(),
      };
      try {
        await store.insert(record);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        throw new AppError(
          'CONFLICT',
          `A secret named ${input.name} already exists in ${input.environment}; delete it first or use another name.`,
          { name: input.name, environment: input.environment },
        );
      }
      const { value: _sealed, ...summary } = record;
      return summary;
    },

    list: (orgId: string): Promise<SecretSummary[]> => store.list(orgId),

    async exists(orgId: string, id: string): Promise<boolean> {
      return (await store.get(orgId, id)) !== null;
    },

    /** The secret without its value; undefined when the org has no such secret. */
    async describe(orgId: string, id: string): Promise<SecretSummary | undefined> {
      const record = await store.get(orgId, id);
      if (!record) return undefined;
      const { value: _sealed, ...summary } = record;
      return summary;
    },

    /** A new value for an existing secret (same ID, name and hosts); undefined when the org has no such secret. */
    async replaceValue(orgId: string, id: string, value: string): Promise<SecretSummary | undefined> {
      const sealed = sealer().seal(value, aad({ _id: id, orgId }));
      if (!(await store.setValue(orgId, id, sealed, new Date()))) return undefined;
      const record = await store.get(orgId, id);
      if (!record) return undefined;
      const { value: _sealed, ...summary } = record;
      return summary;
    },

    remove: (orgId: string, id: string) => store.remove(orgId, id),

    /** The plain value, for the one place that needs it; undefined when the org has no such secret. */
    async reveal(orgId: string, id: string): Promise<string | undefined> {
      const record = await store.get(orgId, id);
      return record ? sealer().open(record.value, aad(record)) : undefined;
    },

    /**
     * A Git token, opened only when the secret may go to `url`: its environment, a host it is bound to, and a
     * transport that does not expose it (https; http only where private hosts are allowed, i.e. tests).
     * Throws GitSecretRefusedError saying why; undefined when the org has no such secret.
     */
    async revealForGit(
      orgId: string,
      id: string,
      use: { url: string; environment: SecretEnvironment; allowHttp: boolean },
    ): Promise<string | undefined> {
      const record = await store.get(orgId, id);
      if (!record) return undefined;
      const refusal = gitSecretRefusal(record, use);
      if (refusal) throw new GitSecretRefusedError(refusal);
      return sealer().open(record.value, aad(record));
    },
  };
}

export type Vault = ReturnType<typeof createVault>;
