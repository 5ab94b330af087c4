import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';

import { MockActivityEnvironment } from '@temporalio/testing';
import type Docker from 'dockerode';

import { createEngineLocal } from '@activities/providers/engine-local';
import { waitInstanceReady } from '@activities/providers/engine-readiness';
import { LABELS } from '@shared/constants';
import { createDockerClient } from '@shared/engine/docker-client';
import { httpProbe } from '@shared/engine/probe';
import { PLAN_POLICIES } from '@shared/plans';

import { eventually } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

const run = promisify(execFile);

// The readiness wait on a real engine, with its pauses in the test's hands: which pause the port opened in is
// known exactly, so "noticed at once" is a count of probes, not a time.
describe('readiness wait (real Docker Engine)', () => {
  const docker: Docker = createDockerClient(process.env.DOCKER_HOST);
  const instance = `test-readiness-${randomUUID().slice(0, 8)}`;
  const engine = createEngineLocal({ docker, publicHost: '127.0.0.1', bindIp: '127.0.0.1', instance });
  const orgId = randomUUID();
  let gated: string;

  beforeAll(async () => {
    gated = await buildFixtureImage(docker, 'gated-hello');
  });

  afterAll(async () => {
    const mine = { label: [`${LABELS.instance}=${instance}`] };
    for (const c of await docker.listContainers({ all: true, filters: mine }))
      await docker.getContainer(c.Id).remove({ force: true, v: true });
    for (const n of await docker.listNetworks({ filters: mine })) await docker.getNetwork(n.Id).remove();
  });

  it('probes promptly at first and notices the app on the first probe after its port opens', async () => {
    const started = await engine.startInstance({
      deploymentId: randomUUID(),
      orgId,
      revision: 1,
      replica: 0,
      image: gated,
      port: 8080,
      env: {},
      limits: PLAN_POLICIES.free.limits,
    });
    const [host, port] = [
      started.upstream.slice(0, started.upstream.lastIndexOf(':')),
      started.upstream.split(':').pop(),
    ];
    const pauses: number[] = [];
    await new MockActivityEnvironment().run(() =>
      waitInstanceReady(docker, started, { port: 8080, timeoutS: 120 }, async (ms) => {
        pauses.push(ms);
        if (pauses.length < 3) return;
        if (pauses.length > 3) throw new Error('probed again after the port had opened and answered');
        // Three probes found nothing; open the port and wait (in this pause) until the app answers HTTP.
        await run('docker', ['exec', started.id, '/bin/busybox', 'touch', '/www/open']);
        await eventually(
          async () => ((await httpProbe(host, Number(port))).status ? true : undefined),
          'the app to answer',
        );
      }),
    );
    // Returned on the probe right after the pause in which the port opened, and the first pauses were short.
    expect(pauses).toHaveLength(3);
    expect(pauses[0]).toBeLessThanOrEqual(50);
    expect(pauses[1]).toBeGreaterThanOrEqual(pauses[0]!);
  });
});
