import { TestWorkflowEnvironment } from '@temporalio/testing';

import { quietTemporalRuntime } from './harness';

/**
 * Temporal's time-skipping test server (the JVM one from Maven Central, which `npm test` fetches), started for one
 * test file. The SDK gives the server 5 s to listen, which a busy 2-core machine sometimes misses: it is tried three
 * times. The caller tears it down.
 */
export async function startTimeSkipping(): Promise<TestWorkflowEnvironment> {
  quietTemporalRuntime();
  const server = process.env.SLIPWAY_TEMPORAL_TEST_SERVER;
  if (!server) throw new Error('SLIPWAY_TEMPORAL_TEST_SERVER is unset: run the suite with `npm test`');
  for (let attempt = 1; ; attempt++) {
    try {
      return await TestWorkflowEnvironment.createTimeSkipping({
        server: { executable: { type: 'existing-path', path: server } },
      });
    } catch (err) {
      if (attempt >= 3 || !/did not start/.test(String(err))) throw err;
    }
  }
}
