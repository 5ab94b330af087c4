import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import { defaultSettings, type OrgSettings, type OrgSettingsVersion, withDefaults } from './types';

export const settingsVersionId = (orgId: string, version: number) => `${orgId}:${version}`;

/**
 * Organisation settings as immutable versions (docs/architecture.md, "Organisation settings"): a change inserts the
 * next version, whose `_id` two concurrent changes cannot both take; nothing here updates or deletes.
 */
export function createOrgSettingsStore(db: Db) {
  const versions = db.collection<OrgSettingsVersion>('org_settings');

  async function latest(orgId: string): Promise<OrgSettingsVersion | null> {
    return guard('orgSettings.latest', () => versions.find({ orgId }).sort({ version: -1 }).limit(1).next());
  }

  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('orgSettings.createIndexes', async () => {
        await versions.createIndex({ orgId: 1, version: -1 }, { unique: true });
      });
    },
    latest,
    /** Throws the duplicate key (isDuplicateKey) when another change took this version first. */
    insert: (v: OrgSettingsVersion) => guard('orgSettings.insert', () => versions.insertOne(v)),

    /**
     * The settings code elsewhere acts on (deploys, tokens, the builder sandbox). The name is not among them: an
     * organisation's name is read from its own record.
     */
    async of(orgId: string): Promise<Omit<OrgSettings, 'name'>> {
      const stored = (await latest(orgId))?.settings;
      const { name: _, ...rest } = stored ? withDefaults(stored) : defaultSettings('');
      return rest;
    },
  };
}

export type OrgSettingsStore = ReturnType<typeof createOrgSettingsStore>;
/** What the code that applies settings needs: the organisation's current ones. */
export type OrgSettingsReader = Pick<OrgSettingsStore, 'of'>;
