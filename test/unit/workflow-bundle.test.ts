import fs from 'node:fs';
import path from 'node:path';

import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';

import { bundleInChildProcess } from '@worker/workflow-bundle';

import { historyFromJSON } from '../helpers/history-json';

/**
 * worker/main.ts has the workflow code bundled by a process of its own, so that webpack's memory never stays in the
 * worker: that bundle must be the whole workflow code, as the in-process bundling made it.
 */
describe('the workflow bundle made in a child process', () => {
  it('replays a recorded deployment and a webhook delivery as the worker would run them', async () => {
    Runtime.install({ logger: new DefaultLogger('WARN') });
    const workflowBundle = await bundleInChildProcess();
    expect(workflowBundle.code.length).toBeGreaterThan(100_000);
    const dir = path.resolve(__dirname, '..', 'fixtures', 'histories');
    const histories = ['deployment-image-running-destroyed', 'webhook-delivery-retried-delivered'].map((id) => ({
      workflowId: id,
      history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, `${id}.json`), 'utf8'))),
    }));
    const errors: Record<string, unknown> = {};
    for await (const r of Worker.runReplayHistories({ workflowBundle }, histories)) errors[r.workflowId] = r.error;
    expect(errors).toEqual({
      'deployment-image-running-destroyed': undefined,
      'webhook-delivery-retried-delivered': undefined,
    });
  }, 180_000);
});
