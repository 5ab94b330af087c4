import { isDuplicateKey } from '@shared/db/mongo';
import { type CloudRegions, regionProblem, regionsOf } from '@shared/deployments/regions';
import type { Provider } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { IdentityService, Principal } from '@shared/identity/service';
import type { OrgSettingsStore } from '@shared/org-settings/store';
import { settingsVersionId } from '@shared/org-settings/store';
import {
  defaultSettings,
  ORG_SETTING_FIELDS,
  type OrgSettings,
  type OrgSettingsVersion,
  withDefaults,
} from '@shared/org-settings/types';
import { PLAN_POLICIES } from '@shared/plans';

/** Changes made from the same version retry on top of the newest; this many losses in a row is a 409. */
const MAX_ATTEMPTS = 8;

export type SettingsPatch = Partial<OrgSettings>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The settings a change would leave, refused (400) when they contradict the plan or each other. */
function check(org: Principal['org'], s: OrgSettings): void {
  const plan = PLAN_POLICIES[org.plan].providers;
  const beyond = (s.allowedProviders ?? []).filter((p) => !plan.includes(p));
  if (beyond.length)
    throw new AppError(
      'INVALID_REQUEST',
      `allowedProviders: ${beyond.join(', ')} ${beyond.length > 1 ? 'are' : 'is'} not in the ${org.plan} plan, which offers ${plan.join(', ')}.`,
      { providers: beyond, plan: org.plan },
    );
  if (s.defaultProvider && !plan.includes(s.defaultProvider))
    throw new AppError(
      'INVALID_REQUEST',
      `defaultProvider: ${s.defaultProvider} is not in the ${org.plan} plan, which offers ${plan.join(', ')} (GET /compat/providers).`,
      { provider: s.defaultProvider, plan: org.plan },
    );
  const deflt: Provider = s.defaultProvider ?? 'engine_local';
  if (s.allowedProviders && !s.allowedProviders.includes(deflt))
    throw new AppError(
      'INVALID_REQUEST',
      `defaultProvider ${deflt}${s.defaultProvider ? '' : ' (the default when none is set)'} is not among allowedProviders (${s.allowedProviders.join(', ')}): change both in the same request.`,
      { defaultProvider: deflt, allowedProviders: s.allowedProviders },
    );
}

/**
 * A defaultRegion the default provider (after the same request's change of it) does not have is refused (400), naming
 * the regions it has, or why it has none.
 */
function checkRegion(s: OrgSettings, patch: SettingsPatch, engineRegion: string, cloud: CloudRegions): void {
  if (s.defaultRegion === null) return;
  const provider: Provider = s.defaultProvider ?? 'engine_local';
  const problem = regionProblem(provider, s.defaultRegion, engineRegion, cloud);
  if (!problem) return;
  const regions = regionsOf(provider, engineRegion, cloud);
  const next = regions.length ? 'one of its regions, or null for its first' : 'null';
  throw new AppError(
    'INVALID_REQUEST',
    'defaultRegion' in patch
      ? `defaultRegion must be a region of the default provider ${provider}${s.defaultProvider ? '' : ' (the default when none is set)'}: ${problem}. Give ${next}.`
      : `defaultProvider ${provider} does not have the organisation's defaultRegion ${s.defaultRegion}: ${problem}. Give defaultRegion in the same request: ${next}.`,
    { defaultProvider: provider, defaultRegion: s.defaultRegion, regions },
  );
}

/**
 * The organisation's settings (docs/architecture.md, "Organisation settings"): each change inserts the next immutable
 * version; two changes from the same version cannot both take its number, and the loser is applied again on top of
 * the winner, so no field given by either is lost.
 */
export function createOrganizationService(deps: {
  store: Pick<OrgSettingsStore, 'latest' | 'insert'>;
  identity: Pick<IdentityService, 'renameOrg'>;
  /** This server's engine region, engine_local's one (ENGINE_REGION). */
  engineRegion: string;
  /** The regions of the clouds the organisation has credentials for. */
  cloudRegions: (orgId: string) => Promise<CloudRegions>;
}) {
  const { store } = deps;

  async function current(org: Principal['org']) {
    const latest = await store.latest(org._id);
    return { latest, settings: latest ? withDefaults(latest.settings) : defaultSettings(org.name) };
  }

  return {
    current,

    /** Applies the fields given; `changes` is empty when none differs (no version is written then). */
    async update(p: Principal, patch: SettingsPatch) {
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const { latest, settings: before } = await current(p.org);
        const after: OrgSettings = { ...before, ...patch };
        const changes = ORG_SETTING_FIELDS.filter((f) => f in patch && !same(before[f], after[f])).map((field) => ({
          field,
          from: before[field],
          to: after[field],
        }));
        if (changes.length === 0) return { latest, settings: before, changes };
        // Checked when they change: a plan changed since must not lock every other field.
        if ('defaultProvider' in patch || 'allowedProviders' in patch) check(p.org, after);
        if ('defaultProvider' in patch || 'defaultRegion' in patch)
          checkRegion(after, patch, deps.engineRegion, await deps.cloudRegions(p.org._id));
        const version: OrgSettingsVersion = {
          _id: settingsVersionId(p.org._id, (latest?.version ?? 0) + 1),
          orgId: p.org._id,
          version: (latest?.version ?? 0) + 1,
          settings: after,
          changes,
          by: { userId: p.user._id, tokenId: p.token._id },
          at: new Date(),
        };
        try {
          await store.insert(version);
        } catch (err) {
          if (isDuplicateKey(err)) continue;
          throw err;
        }
        // The name principals carry follows the newest version (read again: a later change may have won meanwhile).
        if (changes.some((c) => c.field === 'name')) {
          const newest = await current(p.org);
          await deps.identity.renameOrg(p.org._id, newest.settings.name);
        }
        return { latest: version, settings: after, changes };
      }
      throw new AppError(
        'CONFLICT',
        'The organisation’s settings kept changing while this change was applied; read them again and retry.',
      );
    },
  };
}

export type OrganizationService = ReturnType<typeof createOrganizationService>;
