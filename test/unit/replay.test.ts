import fs from 'node:fs';
import path from 'node:path';

import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';

import { workflowBundlerOptions } from '@shared/aliases';

import { carriesSecret, historyFromJSON, historyStrings } from '../helpers/history-json';

/**
 * Deployments (and webhook deliveries) already running when the worker is upgraded replay their recorded histories
 * against the new workflow code: every history recorded from an older main (test/fixtures/histories, README there)
 * must replay with no nondeterminism. A change that alters the commands of running workflows goes behind `patched()`.
 */
const DIR = path.resolve(__dirname, '..', 'fixtures', 'histories');
const fixtures = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith('.json'))
  .map((f) => ({ workflowId: f.replace(/\.json$/, ''), json: fs.readFileSync(path.join(DIR, f), 'utf8') }))
  .sort((a, b) => a.workflowId.localeCompare(b.workflowId));

const workflowsPath = require.resolve('../../workflows');

describe('replay of histories recorded from earlier workflow code', () => {
  const results = new Map<string, Error | undefined>();

  beforeAll(async () => {
    // The replay worker's INFO lines (bundle sizes) would bury the test output.
    Runtime.install({ logger: new DefaultLogger('WARN') });
    const histories = fixtures.map((f) => ({ workflowId: f.workflowId, history: historyFromJSON(JSON.parse(f.json)) }));
    for await (const r of Worker.runReplayHistories(
      { workflowsPath, bundlerOptions: workflowBundlerOptions },
      histories,
    ))
      results.set(r.workflowId, r.error);
  }, 180_000);

  it('has the recorded scenarios: deployments closed and still open, webhook deliveries, the schedules', () => {
    expect(fixtures.map((f) => f.workflowId)).toEqual(
      expect.arrayContaining([
        'deployment-image-running-destroyed',
        'deployment-destroyed-while-starting',
        'deployment-destroyed-while-building',
        'deployment-failed-destroyed',
        'deployment-zip-running-destroyed',
        'deployment-open-running',
        'deployment-open-failed',
        'deployment-commands-destroyed',
        'webhook-delivery-retried-delivered',
        'webhook-resend',
        'webhook-outbox-sweep',
        'reconcile',
        'upload-expiry',
        'volume-in-use-then-deleted',
        'volume-failed-deleted',
        'database-created-deleted',
        'database-backup',
        'database-restore-new',
        'database-restore-in-place',
        'database-scheduled-backup',
        'domain-verified-routed',
        'domain-deleted',
        'domain-expired',
      ]),
    );
  });

  it.each(fixtures.map((f) => f.workflowId))('%s replays deterministically', (workflowId) => {
    expect(results.has(workflowId)).toBe(true);
    expect(results.get(workflowId)).toBeUndefined();
  });

  it('refuses a workflow whose commands changed order (the check can fail)', async () => {
    const f = fixtures.find((x) => x.workflowId === 'deployment-image-running-destroyed')!;
    await expect(
      Worker.runReplayHistory(
        {
          workflowsPath: require.resolve('../fixtures/replay/altered-workflows'),
          bundlerOptions: workflowBundlerOptions,
        },
        historyFromJSON(JSON.parse(f.json)),
        f.workflowId,
      ),
    ).rejects.toBeInstanceOf(DeterminismViolationError);
  }, 120_000);

  it('carries no env value: the recorded deploy was given one, its history has only the names', () => {
    const withEnv = fixtures.find((x) => x.workflowId === 'deployment-image-running-destroyed')!;
    expect(historyStrings(withEnv.json).some((s) => s.includes('"envNames":["API_KEY","MODE"]'))).toBe(true);
    for (const f of fixtures) expect(carriesSecret(f.json)).toBe(false);
  });
});
