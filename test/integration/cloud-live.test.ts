import { randomUUID } from 'node:crypto';
import fs from 'node:fs';

import type { CloudAdapter } from '@activities/providers/cloud';
import { cloudAdaptersFrom } from '@activities/providers/cloud-adapters';
import { CLOUD_CREDENTIALS, type CloudProvider } from '@shared/cloud/credentials';

/**
 * The cloud adapters against the real clouds, run only when credentials for one are in the environment: the variable
 * holds the body `PUT /platform/providers/{provider}/credentials` takes (its JSON, or the path of a file holding it).
 * Each cloud deploys a small public image, waits until the cloud serves it, asks its URL, stops, starts and destroys
 * it, then checks nothing labelled for the deployment is left. Without credentials each cloud's test is skipped with
 * a line saying what to set. Billable: a few minutes of the smallest size each cloud sells.
 */
const LIVE: Record<CloudProvider, { env: string; image: string; port: number }> = {
  cloud_a_run: { env: 'SLIPWAY_LIVE_CLOUD_A_RUN', image: 'us-docker.pkg.dev/cloudrun/container/hello', port: 8080 },
  cloud_b_container_apps: {
    env: 'SLIPWAY_LIVE_CLOUD_B_CONTAINER_APPS',
    image: 'mcr.microsoft.com/k8se/quickstart:latest',
    port: 80,
  },
  cloud_c_ecs_fargate: {
    env: 'SLIPWAY_LIVE_CLOUD_C_ECS_FARGATE',
    image: 'public.ecr.aws/nginx/nginx:stable',
    port: 80,
  },
};
const SERVE_TIMEOUT_MS = 15 * 60_000;

const adapters = cloudAdaptersFrom({
  CLOUD_A_RUN_ENDPOINT: process.env.CLOUD_A_RUN_ENDPOINT ?? '',
  CLOUD_A_LOGGING_ENDPOINT: process.env.CLOUD_A_LOGGING_ENDPOINT ?? '',
  CLOUD_A_TOKEN_URL: process.env.CLOUD_A_TOKEN_URL ?? '',
  CLOUD_B_ARM_ENDPOINT: process.env.CLOUD_B_ARM_ENDPOINT ?? '',
  CLOUD_B_LOGS_ENDPOINT: process.env.CLOUD_B_LOGS_ENDPOINT ?? '',
});

function credentialsOf(provider: CloudProvider): unknown {
  const raw = process.env[LIVE[provider].env]?.trim();
  if (!raw) return undefined;
  const text = raw.startsWith('{') ? raw : fs.readFileSync(raw, 'utf8');
  return CLOUD_CREDENTIALS[provider].parse(JSON.parse(text));
}

async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + SERVE_TIMEOUT_MS;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5000));
  }
}

describe('cloud providers, live', () => {
  for (const provider of Object.keys(LIVE) as CloudProvider[]) {
    const credentials = credentialsOf(provider);
    if (credentials === undefined) {
      console.info(`[live] ${provider}: skipped, ${LIVE[provider].env} is not set (credentials JSON, or a file of it)`);
      test.skip(`${provider}: set ${LIVE[provider].env} to run it against the real cloud`, () => undefined);
      continue;
    }
    test(
      `${provider}: deploys a public image, serves it at its URL, stops, starts and leaves nothing behind`,
      async () => {
        const adapter = adapters[provider] as CloudAdapter;
        const c = credentials as never;
        const deploymentId = randomUUID();
        const region = (credentials as { regions: string[] }).regions[0]!;
        const target = { deploymentId, region };
        try {
          await adapter.verify(c);
          const revision = await adapter.deployRevision(c, {
            deploymentId,
            orgId: 'slipway-live-test',
            revision: 1,
            image: LIVE[provider].image,
            port: LIVE[provider].port,
            env: { SLIPWAY_LIVE: '1' },
            replicas: 1,
            limits: { memoryMb: 512, cpus: 0.25 },
            region,
          });
          const serving = await until('the revision to serve', async () => {
            const s = await adapter.status(c, target);
            if (s.phase === 'failed') throw new Error(`the cloud reports a failure: ${s.message ?? ''}`);
            return s.phase === 'serving' && s.serving?.name === revision.name && s.url ? s : undefined;
          });
          await until('its URL to answer', async () => {
            const r = await fetch(serving.url!).catch(() => undefined);
            return r && r.status < 500 ? true : undefined;
          });
          await adapter.setReplicas(c, { ...target, replicas: 0 });
          await until('it to stop', async () =>
            (await adapter.status(c, target)).phase === 'stopped' ? true : undefined,
          );
          await adapter.setReplicas(c, { ...target, replicas: 1 });
          await until('it to serve again', async () =>
            (await adapter.status(c, target)).phase === 'serving' ? true : undefined,
          );
        } finally {
          await adapter.destroy(c, target);
        }
        const left = (await adapter.listManaged(c)).filter((r) => r.deploymentId === deploymentId);
        expect(left).toEqual([]);
      },
      45 * 60_000,
    );
  }
});
