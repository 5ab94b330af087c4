import { BUILDER_GIT_IMPORT_WORKFLOW, BUILDER_GIT_PUSH_WORKFLOW } from '@shared/contracts/builder-git';
import { BUILDER_TURN_WORKFLOW } from '@shared/contracts/builder-turn';
import { CLOUD_CREDENTIALS_CHECK_WORKFLOW } from '@shared/contracts/cloud-credentials';
import { CLOUD_LOGS_WORKFLOW, CLOUD_STATUS_WORKFLOW } from '@shared/contracts/cloud-read';
import {
  BACKUP_WORKFLOW,
  DATABASE_WORKFLOW,
  RESTORE_WORKFLOW,
  SCHEDULED_BACKUP_WORKFLOW,
} from '@shared/contracts/database';
import { SOURCE_QUESTION_WORKFLOW } from '@shared/contracts/database-source';
import { DEPLOYMENT_WORKFLOW } from '@shared/contracts/deployment';
import { DOMAIN_WORKFLOW } from '@shared/contracts/domain';
import { METRICS_WORKFLOWS } from '@shared/contracts/metrics';
import { RECONCILE_WORKFLOW } from '@shared/contracts/reconcile';
import { SANDBOX_WORKFLOW } from '@shared/contracts/sandbox';
import { UPLOAD_EXPIRY_WORKFLOW } from '@shared/contracts/upload-expiry';
import { USAGE_ROLLUP_WORKFLOW } from '@shared/contracts/usage';
import { VOLUME_WORKFLOW } from '@shared/contracts/volume';
import { WEBHOOK_WORKFLOWS } from '@shared/contracts/webhook-delivery';

import * as bundle from '../../workflows';

/**
 * The api, the schedules and the activities start workflows by the type names in shared/contracts/; the worker
 * registers the functions workflows/index.ts exports, under their own names. A name on one side only is a workflow
 * Temporal cannot find ("workflow type not registered"), met at run time, so it is checked here.
 */
const CONTRACT_NAMES = [
  DEPLOYMENT_WORKFLOW,
  DOMAIN_WORKFLOW,
  BUILDER_TURN_WORKFLOW,
  BUILDER_GIT_PUSH_WORKFLOW,
  BUILDER_GIT_IMPORT_WORKFLOW,
  SANDBOX_WORKFLOW,
  RECONCILE_WORKFLOW,
  UPLOAD_EXPIRY_WORKFLOW,
  USAGE_ROLLUP_WORKFLOW,
  VOLUME_WORKFLOW,
  DATABASE_WORKFLOW,
  SOURCE_QUESTION_WORKFLOW,
  BACKUP_WORKFLOW,
  RESTORE_WORKFLOW,
  SCHEDULED_BACKUP_WORKFLOW,
  CLOUD_CREDENTIALS_CHECK_WORKFLOW,
  CLOUD_LOGS_WORKFLOW,
  CLOUD_STATUS_WORKFLOW,
  ...Object.values(METRICS_WORKFLOWS),
  ...Object.values(WEBHOOK_WORKFLOWS),
];

describe('workflow contracts and the worker bundle', () => {
  it('every type name a contract gives is a workflow the bundle exports', () => {
    const exported = Object.entries(bundle)
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name);
    expect(exported).toEqual(expect.arrayContaining(CONTRACT_NAMES));
  });

  it('the bundle exports workflows only, each named by a contract', () => {
    expect(Object.keys(bundle).sort()).toEqual([...CONTRACT_NAMES].sort());
  });
});
