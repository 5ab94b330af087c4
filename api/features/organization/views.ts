import { regionsOf } from '@shared/deployments/regions';
import type { Principal } from '@shared/identity/service';
import type { OrgSettings, OrgSettingsVersion } from '@shared/org-settings/types';
import { TOKEN_LIFETIME_CEILING_S } from '@shared/org-settings/types';
import { PLAN_POLICIES } from '@shared/plans';
import type { SellerRecord } from '@shared/sales/store';

/**
 * The organisation's settings as clients see them. The seller part shows whether a secret or key exists, a key's
 * prefix and dates, and never a value.
 */
export function organizationView(
  org: Principal['org'],
  current: { latest: OrgSettingsVersion | null; settings: OrgSettings },
  seller: SellerRecord | null,
  defaults: { sandboxIdleS: number; engineRegion: string },
) {
  const s = current.settings;
  const defaultProvider = s.defaultProvider ?? 'engine_local';
  const now = new Date();
  const [secret, ...old] = seller?.webhook?.secrets ?? [];
  return {
    id: org._id,
    plan: org.plan,
    ...s,
    effective: {
      defaultProvider,
      allowedProviders: s.allowedProviders ?? [...PLAN_POLICIES[org.plan].providers],
      defaultRegion: s.defaultRegion ?? regionsOf(defaultProvider, defaults.engineRegion)[0] ?? null,
      tokenMaxLifetimeS: s.tokenMaxLifetimeS ?? TOKEN_LIFETIME_CEILING_S,
      sandboxIdleS: s.sandboxIdleS ?? defaults.sandboxIdleS,
    },
    seller: {
      webhookUrl: seller?.webhook?.url ?? null,
      webhookSecretSet: secret !== undefined,
      previousSecretsValidUntil: old
        .filter((o) => o.retiresAt && o.retiresAt > now)
        .map((o) => o.retiresAt!.toISOString()),
      apiKey: seller?.apiKey
        ? { createdAt: seller.apiKey.createdAt.toISOString(), prefix: seller.apiKey.prefix ?? null }
        : null,
    },
    version: current.latest?.version ?? 0,
    updatedAt: current.latest?.at.toISOString() ?? null,
    updatedBy: current.latest?.by.userId ?? null,
  };
}
