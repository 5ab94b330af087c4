import type { Provider } from '../deployments/types';
import type { SecretEnvironment } from '../secrets/store';

/** A token's longest lifetime when the organisation sets none (the token routes' own bound). */
export const TOKEN_LIFETIME_CEILING_S = 365 * 86400;
/** Bounds of an organisation's builder sandbox idle timeout: shorter would stop a preview between two edits. */
export const SANDBOX_IDLE_BOUNDS_S = { min: 60, max: 7 * 86400 } as const;

/**
 * What an organisation decides for itself; `null` means "the server's default". Every version holds the whole set,
 * so the newest version alone is the organisation's settings.
 */
export interface OrgSettings {
  name: string;
  /** Where a secret created without an environment goes, and which vault a source deploy reads when it names none. */
  defaultVaultEnvironment: SecretEnvironment;
  /** The provider of a deploy that names none; engine_local when null. */
  defaultProvider: Provider | null;
  /** The providers new deployments may use; every provider of the plan when null. */
  allowedProviders: Provider[] | null;
  /**
   * The region of a deploy to the default provider that names none; the provider's first region when null. One of
   * the default provider's regions when set (shared/deployments/regions.ts). Versions written before it existed lack it.
   */
  defaultRegion: string | null;
  /** New tokens may not live longer than this; TOKEN_LIFETIME_CEILING_S when null. */
  tokenMaxLifetimeS: number | null;
  /** A builder sandbox nobody synced for this long is stopped; SANDBOX_IDLE_S when null. */
  sandboxIdleS: number | null;
}

export type OrgSettingField = keyof OrgSettings;
export const ORG_SETTING_FIELDS: readonly OrgSettingField[] = [
  'name',
  'defaultVaultEnvironment',
  'defaultProvider',
  'allowedProviders',
  'defaultRegion',
  'tokenMaxLifetimeS',
  'sandboxIdleS',
];

/**
 * One version of an organisation's settings, never changed once written: `_id` is `<orgId>:<version>`, so two changes
 * made from the same version cannot both be written (the second is retried on top of the first).
 */
export interface OrgSettingsVersion {
  _id: string;
  orgId: string;
  version: number;
  settings: OrgSettings;
  /** The fields this version changed, with what they were. */
  changes: { field: OrgSettingField; from: unknown; to: unknown }[];
  by: { userId: string; tokenId: string };
  at: Date;
}

/**
 * A stored version's settings with every field: one written before a field existed reads it as the server's default.
 */
export const withDefaults = (stored: OrgSettings): OrgSettings => ({ ...defaultSettings(stored.name), ...stored });

/** An organisation's settings before any change: its name as created, everything else the server's defaults. */
export const defaultSettings = (name: string): OrgSettings => ({
  name,
  defaultVaultEnvironment: 'PRODUCTION',
  defaultProvider: null,
  allowedProviders: null,
  defaultRegion: null,
  tokenMaxLifetimeS: null,
  sandboxIdleS: null,
});
