import type { ProviderConnection, ProviderKind } from '../ai/types';
import type { Sealed } from '../secrets/box';

/**
 * An organisation's AI provider (docs/architecture.md, "AI builder"). The key exists only sealed with the vault's box
 * (AES-256-GCM, bound to this record): no read model, response or log carries it.
 */
export interface AiProviderRecord {
  _id: string;
  orgId: string;
  /** Unique in the organisation (a unique index). */
  name: string;
  kind: ProviderKind;
  /** Normalised: scheme, host, optional port and path, no trailing slash, no query, fragment or credentials. */
  baseUrl: string;
  apiKeySealed: Sealed;
  defaultModel: string;
  /** Models a session may choose besides the default; absent means the default only. */
  models?: string[];
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What reads return: the record without its key. */
export type AiProviderSummary = Omit<AiProviderRecord, 'apiKeySealed'>;

export interface CreateAiProvider {
  name: string;
  kind: ProviderKind;
  baseUrl: string;
  apiKey: string;
  defaultModel: string;
  models?: string[];
  enabled?: boolean;
}

/** A change; `models: []` removes the list. Kind is fixed at creation: a key belongs to one API. */
export type UpdateAiProvider = Partial<Omit<CreateAiProvider, 'kind'>>;

/** What the worker needs to call the provider: the opened key, only ever in its memory. */
export interface AiProviderCredentials extends ProviderConnection {
  id: string;
  name: string;
  defaultModel: string;
  models: string[];
  enabled: boolean;
}
