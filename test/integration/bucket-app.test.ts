import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { PutObjectCommand } from '@aws-sdk/client-s3';

import { DEFAULT_BASE_IMAGES } from '@shared/build/base-images';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { connectAgent } from '../helpers/mcp';
import { archiveForm, zipDirectory } from '../helpers/zip';

const EXAMPLE = path.resolve(__dirname, '..', '..', 'examples', 'node-s3');

interface Status {
  data: { status: string; revision: number; url: string | null; envVarNames: string[] };
}
interface BucketBody {
  data: { id: string; s3Name: string };
}

/**
 * The README's example: a small Node app using @aws-sdk/client-s3, deployed from source, linked to a bucket (its S3_*
 * variables reaching the app as a new release, the store reached through the host's one opening), keeps files there,
 * and is refused by the store on every other bucket; unlinked, it runs a new release without them.
 */
describe('a deployed app with its bucket', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bucket-app-'));
    h = await startHarness('bucket-app', {
      VOLUMES_DIR: dir,
      BUILD_BASE_IMAGE_NODE: DEFAULT_BASE_IMAGES.node,
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
    });
  }, 180_000);
  afterAll(async () => {
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  it('puts and gets in its bucket, is AccessDenied on every other, and loses the variables when unlinked', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const other = client(h, (await h.newOrg('pro')).token);
    const bucket = (await api.post<BucketBody>('/platform/buckets', { name: 'app-files' })).body.data;
    const sibling = (await api.post<BucketBody>('/platform/buckets', { name: 'sibling' })).body.data;
    const foreign = (await other.post<BucketBody>('/platform/buckets', { name: 'app-files' })).body.data;
    for (const b of [sibling.s3Name, foreign.s3Name, h.config.S3_BUCKET])
      await h.s3.send(new PutObjectCommand({ Bucket: b, Key: 'secret.txt', Body: 'not yours' }));

    const uploaded = await api.call<{ uploadId: string }>(
      'POST',
      '/compat/uploads/zip',
      archiveForm(await zipDirectory(EXAMPLE), 'files.zip'),
    );
    expect(uploaded.status).toBe(201);
    const deployed = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: 'files',
      uploadId: uploaded.body.uploadId,
      port: 8080,
    });
    expect(deployed.status).toBe(202);
    const id = deployed.body.data.deployment.id;
    const status = async () => (await api.get<Status>(`/platform/deployments/${id}`)).body.data;
    const first = await eventually(
      async () => {
        const s = await status();
        return ['failed', 'running'].includes(s.status) ? s : undefined;
      },
      'the first deploy',
      900_000,
    );
    expect(first.status).toBe('running');

    const linked = await api.post<{ data: { env: string[] } }>(`/platform/buckets/${bucket.id}/links`, {
      deploymentId: id,
    });
    expect(linked.status).toBe(202);
    expect(linked.body.data.env).toEqual(expect.arrayContaining(['S3_BUCKET', 'S3_SECRET_ACCESS_KEY']));
    const running = await eventually(
      async () => {
        const s = await status();
        return s.status === 'running' && s.revision > first.revision && s.envVarNames.includes('S3_BUCKET')
          ? s
          : undefined;
      },
      'the release with the bucket serving',
      300_000,
    );
    const keys = await api.get<{ data: { credentials: { kind: string; deploymentId: string | null }[] } }>(
      `/platform/buckets/${bucket.id}/credentials`,
    );
    expect(keys.body.data.credentials).toEqual([expect.objectContaining({ kind: 'link', deploymentId: id })]);
    expect((await api.get<{ data: { links: unknown[] } }>(`/platform/buckets/${bucket.id}/links`)).body.data).toEqual({
      links: [expect.objectContaining({ deploymentId: id })],
    });

    const url = running.url!;
    const ask = (p: string, init?: RequestInit) =>
      eventually(async () => {
        const r = await fetch(`${url}${p}`, { ...init, signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
        return r && r.status < 300 ? ((await r.json()) as Record<string, unknown>) : undefined;
      }, `${p} to answer`);
    expect(await ask('/files/hello.txt', { method: 'PUT', body: 'from the app' })).toEqual({ stored: 'hello.txt' });
    expect(await ask('/files/hello.txt')).toEqual({ key: 'hello.txt', body: 'from the app' });
    // What the app wrote is in its bucket, as the store holds it.
    const usage = await api.get<{ data: { usage: { objects: number } } }>(`/platform/buckets/${bucket.id}`);
    expect(usage.body.data.usage.objects).toBe(1);
    for (const b of [sibling.s3Name, foreign.s3Name, h.config.S3_BUCKET])
      expect({ b, ...(await ask(`/probe?bucket=${b}`)) }).toEqual({ b, put: 'AccessDenied', get: 'AccessDenied' });

    const unlinked = await api.del(`/platform/buckets/${bucket.id}/links/${id}`);
    expect(unlinked.status).toBe(202);
    const without = await eventually(
      async () => {
        const s = await status();
        if (s.status === 'running' && s.revision > running.revision && !s.envVarNames.includes('S3_BUCKET')) return s;
        // What it reads meanwhile, for the timeout's message.
        throw new Error(`${s.status} at revision ${s.revision} with ${s.envVarNames.join(',')}`);
      },
      'the release without the bucket serving',
      300_000,
    );
    expect(without.envVarNames.filter((n) => n.startsWith('S3_'))).toEqual([]);
    await eventually(async () => {
      const r = await fetch(`${url}/`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
      const body = r && r.ok ? ((await r.json()) as { linked: boolean }) : undefined;
      return body && !body.linked ? body : undefined;
    }, 'the app without the bucket answering');
    expect(
      (await api.get<{ data: { credentials: unknown[] } }>(`/platform/buckets/${bucket.id}/credentials`)).body.data
        .credentials,
    ).toEqual([]);

    // An agent links and unlinks through MCP, each a release, as the routes do.
    const { client: mcp, call } = await connectAgent(h.baseUrl, org.token, 'bucket-app-test');
    try {
      const byTool = await call('link_bucket', { bucketId: bucket.id, deploymentId: id });
      expect(byTool.isError).toBe(false);
      expect(byTool.s).toMatchObject({ deploymentId: id, bucket: { id: bucket.id } });
      const relinked = await eventually(
        async () => {
          const s = await status();
          return s.status === 'running' && s.revision > without.revision && s.envVarNames.includes('S3_BUCKET')
            ? s
            : undefined;
        },
        'the release linked through MCP serving',
        300_000,
      );
      expect(await ask('/files/hello.txt')).toEqual({ key: 'hello.txt', body: 'from the app' });
      const unlinkedByTool = await call('unlink_bucket', { bucketId: bucket.id, deploymentId: id });
      expect(unlinkedByTool.isError).toBe(false);
      await eventually(
        async () => {
          const s = await status();
          return s.status === 'running' && s.revision > relinked.revision && !s.envVarNames.includes('S3_BUCKET')
            ? s
            : undefined;
        },
        'the release unlinked through MCP serving',
        300_000,
      );
    } finally {
      await mcp.close();
    }
    expect((await api.del(`/platform/deployments/${id}`)).status).toBeLessThan(300);
  }, 1_500_000);
});
