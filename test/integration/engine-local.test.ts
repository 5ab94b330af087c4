import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { LABELS } from '@shared/constants';
import { imageNotFoundMessage } from '@shared/images/ownership';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage, buildImageOnce } from '../helpers/images';
import { pushAndForget, startRegistry } from '../helpers/registry';

describe('engine_local provider (real Docker Engine, local registry)', () => {
  let h: Harness;
  let registry: Awaited<ReturnType<typeof startRegistry>>;

  beforeAll(async () => {
    h = await startHarness('engine', {
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      DEPLOY_READY_TIMEOUT_S: '5',
      // The pull path is tested against a registry on loopback, which production refuses.
      ALLOW_PRIVATE_REGISTRIES: 'true',
    });
    registry = await startRegistry();
  });
  afterAll(async () => {
    await h?.stop();
    await registry?.stop();
  });

  it('pulls an image that is not present locally, then runs it', async () => {
    const local = await buildFixtureImage(h.docker, 'hello');
    const ref = `${registry.host}/slipway-test/pulled:${randomUUID().slice(0, 8)}`;
    await pushAndForget(h.docker, local, ref);
    const api = client(h, (await h.newOrg()).token);
    const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image: ref, name: 'pulled' });
    const d = await api.waitFor(r.body.deploymentId, ['running', 'failed']);
    expect(d.status).toBe('running');
    expect((d.events as { message: string }[]).some((e) => e.message.startsWith('pulled image'))).toBe(true);
    expect(await (await fetch(d.url as string)).text()).toBe('hello from slipway\n');
    await api.destroyAndWait(r.body.deploymentId);
  });

  it('runs an organisation’s pulled image for it alone: another org naming it by tag or digest finds nothing', async () => {
    const owner = await h.newOrg();
    // An image that carries its organisation's label, as Slipway's builds do, pushed to a registry.
    const local = `slipway-test/owned-${randomUUID().slice(0, 8)}:1`;
    await buildImageOnce(h.docker, local, async (context) => {
      await fs.cp(path.join(__dirname, '..', 'fixtures', 'images', 'hello'), context, { recursive: true });
      await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
      await fs.appendFile(path.join(context, 'Dockerfile'), `\nLABEL ${LABELS.orgId}="${owner.orgId}"\n`);
    });
    const ref = `${registry.host}/slipway-test/owned:${randomUUID().slice(0, 8)}`;
    await pushAndForget(h.docker, local, ref);
    const mine = client(h, owner.token);
    const own = await mine.post<{ deploymentId: string }>('/compat/deploy', { image: ref, name: 'owned' });
    expect((await mine.waitFor(own.body.deploymentId, ['running', 'failed'])).status).toBe('running');
    const digest = (await h.docker.getImage(ref).inspect()).RepoDigests.find((d) => d.startsWith(registry.host))!;
    expect(digest).toMatch(/@sha256:[0-9a-f]{64}$/);

    const other = client(h, (await h.newOrg()).token);
    for (const image of [ref, digest]) {
      const r = await other.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'borrowed' });
      const d = (await other.waitFor(r.body.deploymentId, ['running', 'failed'])) as {
        status: string;
        error?: unknown;
      };
      expect({ image, status: d.status }).toEqual({ image, status: 'failed' });
      expect(d.error).toMatchObject({ phase: 'pull', message: expect.stringMatching(/was not found/) });
    }
    await mine.destroyAndWait(own.body.deploymentId);
  });

  it('tells a registry that has no such image ("not found") from one that cannot be reached', async () => {
    const api = client(h, (await h.newOrg()).token);
    const failed = async (image: string) => {
      const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'unpullable' });
      expect(r.status).toBe(202);
      return (await api.waitFor(r.body.deploymentId, ['running', 'failed'])) as {
        status: string;
        error?: { phase: string; message: string; hint: string };
      };
    };
    const absent = `${registry.host}/slipway-test/never-pushed:1`;
    const answered = await failed(absent);
    expect(answered).toMatchObject({ status: 'failed', error: { phase: 'pull' } });
    expect(answered.error!.message).toBe(imageNotFoundMessage(absent));
    expect(answered.error!.hint).toMatch(/is not on the engine and cannot be pulled: check its name and tag/);

    for (const [image, registryHost, reason] of [
      ['127.0.0.1:1/slipway-test/app:1', '127.0.0.1:1', 'it refused the connection'],
      ['slipway-none.invalid/app:1', 'slipway-none.invalid', 'its host name does not resolve'],
    ] as const) {
      const d = await failed(image);
      expect({ image, status: d.status, phase: d.error?.phase }).toEqual({ image, status: 'failed', phase: 'pull' });
      expect(d.error!.message).toContain(`the registry ${registryHost} could not be reached (${reason})`);
      expect(d.error!.message).not.toMatch(/was not found|check the repository, tag or digest/i);
      expect(d.error!.hint).toMatch(
        new RegExp(`^The registry ${registryHost.replace(/\./g, '\\.')} could not be reached`),
      );
    }
  });

  it('fails another organisation’s image at an unreachable registry exactly as an absent one there', async () => {
    const owner = await h.newOrg();
    const id = randomUUID().slice(0, 8);
    const held = `127.0.0.1:1/slipway-test/held-${id}:1`;
    const local = `slipway-test/held-${id}:1`;
    await buildImageOnce(h.docker, local, async (context) => {
      await fs.cp(path.join(__dirname, '..', 'fixtures', 'images', 'hello'), context, { recursive: true });
      await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
      await fs.appendFile(path.join(context, 'Dockerfile'), `\nLABEL ${LABELS.orgId}="${owner.orgId}"\n`);
    });
    await h.docker.getImage(local).tag({ repo: held.slice(0, held.lastIndexOf(':')), tag: '1' });
    try {
      const other = client(h, (await h.newOrg()).token);
      const messages: string[] = [];
      for (const image of [held, `127.0.0.1:1/slipway-test/absent-${id}:1`]) {
        const r = await other.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'borrowed' });
        const d = (await other.waitFor(r.body.deploymentId, ['running', 'failed'])) as {
          status: string;
          error?: { message: string };
        };
        expect({ image, status: d.status }).toEqual({ image, status: 'failed' });
        messages.push(d.error!.message.replace(image, '<image>'));
      }
      expect(messages[0]).toMatch(/the registry 127\.0\.0\.1:1 could not be reached/);
      expect(messages[0]).toBe(messages[1]);
    } finally {
      for (const tag of [held, local])
        await h.docker
          .getImage(tag)
          .remove({ force: true })
          .catch(() => undefined);
    }
  });

  it('applies the plan’s resource limits and the org’s own bridge network', async () => {
    const image = await buildFixtureImage(h.docker, 'hello');
    const org = await h.newOrg('free');
    const api = client(h, org.token);
    const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'limited' });
    await api.waitFor(r.body.deploymentId, ['running']);
    const [summary] = await h.docker.listContainers({
      filters: { label: [`${LABELS.deploymentId}=${r.body.deploymentId}`] },
    });
    const info = await h.docker.getContainer(summary!.Id).inspect();
    expect(info.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(info.HostConfig.NanoCpus).toBe(0.5e9);
    expect(info.HostConfig.PidsLimit).toBe(256);
    expect(Object.keys(info.NetworkSettings.Networks)).toEqual([`slipway-org-${org.orgId}`]);
    expect(info.Config.Labels).toMatchObject({ [LABELS.orgId]: org.orgId, [LABELS.managed]: 'true' });
    await api.destroyAndWait(r.body.deploymentId);
  });

  it('fails a container that exits before answering, quoting its last log lines', async () => {
    const image = await buildFixtureImage(h.docker, 'crash');
    const api = client(h, (await h.newOrg()).token);
    const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'crash' });
    const d = await api.waitFor(r.body.deploymentId, ['failed', 'running']);
    expect(d.status).toBe('failed');
    // Whether the exit is seen right after the start or while waiting for the port is a race; both name it.
    expect(d.error).toMatchObject({ code: 'DEPLOYMENT_FAILED', phase: expect.stringMatching(/^(start|ready)$/) });
    expect((d.error as { message: string }).message).toMatch(
      /(exited with code 3|exited and was restarted \d+ times)[\s\S]*boom: missing DATABASE_URL/,
    );
    const logs = await api.get<{ lines: { message: string }[] }>(`/compat/deployments/${r.body.deploymentId}/logs`);
    expect(logs.body.lines.map((l) => l.message)).toContain('boom: missing DATABASE_URL');
    await api.destroyAndWait(r.body.deploymentId);
  });

  it('fails a container that never listens on its port within the ready timeout', async () => {
    const image = await buildFixtureImage(h.docker, 'hello');
    const api = client(h, (await h.newOrg()).token);
    const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'wrong-port', port: 9999 });
    const d = await api.waitFor(r.body.deploymentId, ['failed', 'running'], 60_000);
    expect(d.status).toBe('failed');
    // Within the window, or sooner once the app is seen settled on its own port 8080.
    expect((d.error as { message: string }).message).toMatch(
      /^nothing answered on port 9999(?: within 5 s|: the app listens on port 8080 instead)/,
    );
    await api.destroyAndWait(r.body.deploymentId);
  });
});
