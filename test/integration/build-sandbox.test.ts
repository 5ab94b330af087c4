import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';

import { REMOTE_ADD_REFUSED } from '@shared/build/dockerfile-policy';
import { createOrgBuildLeases } from '@shared/build/org-leases';
import { BUILD_NETWORK } from '@shared/build/sandbox';
import { createRedis } from '@shared/redis';

import { BASE_IMAGES } from '../helpers/base-images';
import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { archiveForm, makeZip } from '../helpers/zip';

type Body = Record<string, unknown> & { error?: string; code?: string };
interface Deployment {
  status: string;
  error?: { code: string; phase: string; message: string };
}
interface LogLines {
  lines: { stream: string; message: string }[];
}

/**
 * A build is the tenant's code running on our engine: it must reach nothing on the host (where Temporal's HTTP API
 * and the stack listen) and nothing private, use only images its organisation may use, and stay within its plan.
 * Each attack here is performed as a tenant would, against the real engine.
 */
describe('build sandbox', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('build-sandbox', {
      BUILD_BASE_IMAGE_STATIC: BASE_IMAGES.static,
      BUILD_BASE_IMAGE_NODE: BASE_IMAGES.node,
      BUILD_BASE_IMAGE_PYTHON: BASE_IMAGES.python,
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_PLATFORM_PER_15MIN: '10000',
    });
  }, 120_000);
  afterAll(() => h?.stop());

  type Api = ReturnType<typeof client>;
  const org = async (plan: 'free' | 'pro' = 'pro') => client(h, (await h.newOrg(plan)).token);

  /** Deploys a zip holding `dockerfile` (and `files`) and waits for the outcome. */
  async function build(api: Api, dockerfile: string, files: Record<string, string> = {}) {
    const zip = await makeZip({ Dockerfile: dockerfile, 'index.html': 'ok', ...files });
    const up = await api.call<Body & { uploadId: string }>('POST', '/compat/uploads/zip', archiveForm(zip));
    expect(up.status).toBe(201);
    const r = await api.post<Body & { deploymentId: string }>('/compat/deploy/source', {
      name: 'sandbox',
      uploadId: up.body.uploadId,
      port: 8080,
    });
    expect(r.status).toBe(202);
    const id = r.body.deploymentId;
    const d = (await api.waitFor(id, ['running', 'failed'], 240_000)) as unknown as Deployment;
    const lines = (await api.get<LogLines>(`/compat/deployments/${id}/logs?limit=1000`)).body.lines;
    return { id, d, log: lines.map((l) => l.message).join('\n') };
  }

  it('refuses ADD from a URL (the Temporal HTTP API on the host), fetching nothing', async () => {
    // Stands in for Temporal's HTTP API on loopback: what the engine daemon could fetch from the host's network.
    const requests: string[] = [];
    const secret = `envVars of another org ${Math.random()}`;
    const server = http.createServer((req, res) => {
      requests.push(req.url ?? '');
      res.end(JSON.stringify({ history: secret }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const api = await org();
      const { d, log } = await build(
        api,
        [
          `FROM ${BASE_IMAGES.static}`,
          `ADD http://127.0.0.1:${port}/api/v1/namespaces/default/workflows/deployment%2Fother/history /srv/www/h.json`,
          'RUN cat /srv/www/h.json',
        ].join('\n'),
      );
      expect(d.status).toBe('failed');
      expect(d.error).toMatchObject({ code: 'DEPLOYMENT_FAILED', phase: 'build' });
      expect(d.error?.message).toContain(REMOTE_ADD_REFUSED);
      expect(d.error?.message).toMatch(/line 2 \(ADD\)/);
      expect(log).toContain(REMOTE_ADD_REFUSED);
      expect(log).not.toContain(secret);
      expect(requests).toEqual([]);
    } finally {
      server.close();
    }
  });

  it("runs RUN steps where the host's addresses cannot be reached, but the package registries can", async () => {
    // Listens on every host interface, as a careless service (or Temporal bound to 0.0.0.0) would.
    const seen: string[] = [];
    const server = net.createServer((s) => {
      seen.push(s.remoteAddress ?? '?');
      s.end('HOST-SERVICE-ANSWERED\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const apiPort = new URL(h.baseUrl).port;
    const hostAddresses = Object.values(os.networkInterfaces())
      .flat()
      .filter((a): a is os.NetworkInterfaceInfo => a !== undefined && a.family === 'IPv4')
      .map((a) => a.address);
    // The gateway of the build network is the host too (it exists once a build has run; the first build makes it).
    const targets = [...new Set([...hostAddresses, '172.17.0.1', '169.254.169.254'])];
    try {
      const api = await org();
      const probes = targets.flatMap((a) => [
        `if nc -w 3 ${a} ${port} </dev/null; then echo "REACHED ${a}:${port}"; fi`,
        `if nc -w 3 ${a} ${apiPort} </dev/null; then echo "REACHED ${a}:${apiPort}"; fi`,
      ]);
      const { d, log } = await build(
        api,
        [
          `FROM ${BASE_IMAGES.static}`,
          `RUN ${probes.join('; ')}; GW=$(ip route | awk '/default/ {print $3}'); echo "gateway $GW"; if nc -w 3 "$GW" ${port} </dev/null; then echo "REACHED gateway"; fi; true`,
          'RUN nslookup registry.npmjs.org && nc -w 5 registry.npmjs.org 443 </dev/null && echo REGISTRY-REACHABLE; true',
        ].join('\n'),
      );
      expect(d.status).toBe('running');
      expect(log).toMatch(/gateway \d+\.\d+\.\d+\.\d+/);
      expect(log).not.toMatch(/^\s*REACHED |HOST-SERVICE-ANSWERED/m);
      expect(seen).toEqual([]);
      expect(log).toContain('REGISTRY-REACHABLE');
      // The steps ran on the build network, whose bridge the host firewall matches by name.
      const network = await h.docker.getNetwork(BUILD_NETWORK.name).inspect();
      expect(network.Options?.['com.docker.network.bridge.name']).toBe(BUILD_NETWORK.bridge);
    } finally {
      server.close();
    }
  });

  it("stops a step that allocates past the plan's memory, saying so", async () => {
    const api = await org('free');
    const { d, log } = await build(
      api,
      // tail buffers its whole input when there is no newline: 600 MB against the free plan's 256 MB.
      `FROM ${BASE_IMAGES.static}\nRUN head -c 600000000 /dev/zero | tail > /dev/null\n`,
    );
    expect(d.status).toBe('failed');
    expect(d.error?.message).toMatch(/the build step ran out of memory \(limit 256 MB on the free plan\)/);
    expect(log).toMatch(/ran out of memory/);
  });

  it("stops a step that forks past the plan's process limit, saying so", async () => {
    const api = await org('free');
    const { id, d } = await build(
      api,
      `FROM ${BASE_IMAGES.static}\nRUN for i in $(seq 400); do sleep 10 & done; wait; echo all-forked\n`,
    );
    expect(d.status).toBe('failed');
    expect(d.error?.message).toMatch(/the build step reached the process limit \(256 processes on the free plan\)/);
    // Nothing of the build's cgroup is left behind.
    const left = await fs.readdir('/sys/fs/cgroup/pids/slipway-builds').catch(() => [] as string[]);
    expect(left.filter((n) => n.startsWith(id))).toEqual([]);
  });

  it('refuses FROM a registry on a private address, so the engine never contacts it', async () => {
    const contacts: string[] = [];
    const registry = net.createServer((sock) => {
      contacts.push(sock.remoteAddress ?? '?');
      sock.destroy();
    });
    await new Promise<void>((resolve) => registry.listen(0, '127.0.0.1', resolve));
    const port = (registry.address() as net.AddressInfo).port;
    try {
      const api = await org();
      for (const from of [`127.0.0.1:${port}/team/app:1`, '169.254.169.254/latest/meta:1']) {
        const { d } = await build(api, `FROM ${from}\nRUN true\n`);
        expect(d.status).toBe('failed');
        expect(d.error?.message).toMatch(/images from the registry .* are refused: .*loopback|link-local/);
      }
      expect(contacts).toEqual([]);
    } finally {
      registry.close();
    }
  });

  it("refuses another organisation's image in FROM, COPY --from and via ARG, as not found", async () => {
    const owner = await org();
    const built = await build(owner, `FROM ${BASE_IMAGES.static}\nCOPY index.html /srv/www/\n`);
    expect(built.d.status).toBe('running');
    const image = `slipway/${built.id}:1`;
    const imageId = (await h.docker.getImage(image).inspect()).Id.replace(/^sha256:/, '');

    const other = await org();
    const attempts = [
      `FROM ${image}`,
      `ARG BASE=${image}\nFROM \${BASE}`,
      `FROM ${BASE_IMAGES.static}\nCOPY --from=${image} /srv/www/index.html /srv/www/stolen.html`,
    ];
    for (const dockerfile of attempts) {
      const { d, log } = await build(other, dockerfile);
      expect(d.status).toBe('failed');
      expect(d.error?.message).toContain(`image ${image} was not found`);
      expect(log).not.toMatch(/Step 2\/|stolen/);
    }
    // Exactly what a name that exists nowhere gets: nothing tells the two apart.
    const missingImage = 'slipway/00000000-0000-4000-8000-000000000000:1';
    const missing = await build(other, `FROM ${missingImage}`);
    expect(missing.d.error?.message).toContain('image slipway/00000000-0000-4000-8000-000000000000:1 was not found');
    expect(missing.d.error?.message?.replace(/line \d+ \(\w+\)/, '')).toBe(
      (await build(other, `FROM ${image}`)).d.error?.message
        ?.replace(/line \d+ \(\w+\)/, '')
        .replace(image, missingImage),
    );
    // An ID prefix is never a name, not even for the owner.
    for (const api of [other, owner]) {
      const byId = await build(api, `FROM ${imageId.slice(0, 6)}`);
      expect(byId.d.status).toBe('failed');
      expect(byId.d.error?.message).toMatch(/image IDs and ID prefixes are not accepted/);
    }

    // The owner itself may build on its own image.
    const own = await build(owner, `FROM ${image}\nRUN echo own-base\n`);
    expect(own.d.status).toBe('running');
  });
});

describe("one organisation's builds across workers", () => {
  const redises: ReturnType<typeof createRedis>[] = [];
  const worker = (leaseMs = 30_000) => {
    const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    redises.push(redis);
    return { redis, leases: createOrgBuildLeases(redis, { prefix, perOrg: 1, leaseMs, pollMs: 50 }) };
  };
  const prefix = `test-build-leases-${process.pid}:`;
  const never = new AbortController().signal;
  afterAll(() => redises.forEach((r) => r.disconnect()));

  it('admits one build of an organisation at a time, whichever worker runs it; other organisations go on', async () => {
    const [a, b] = [worker(), worker()];
    const releaseA = await a.leases.acquire('org-x', 'dep-1/r1/a1', never);
    let told!: () => void;
    const waiting = new Promise<void>((resolve) => (told = resolve));
    const second = b.leases.acquire('org-x', 'dep-2/r1/a1', never, () => told());
    await waiting;
    expect(await a.leases.holders('org-x')).toEqual(['dep-1/r1/a1']);
    const releaseY = await b.leases.acquire('org-y', 'dep-3/r1/a1', never);
    await releaseA();
    const releaseB = await second;
    expect(await a.leases.holders('org-x')).toEqual(['dep-2/r1/a1']);
    await releaseB();
    await releaseY();
    expect(await a.leases.holders('org-x')).toEqual([]);
  });

  it('frees the slot of a worker that died holding it, and stops waiting when the build is cancelled', async () => {
    const dead = worker(300);
    await dead.leases.acquire('org-z', 'dep-4/r1/a1', never);
    dead.redis.disconnect(); // no more renewals
    const live = worker();
    const cancel = new AbortController();
    let told!: () => void;
    const waiting = new Promise<void>((resolve) => (told = resolve));
    const cancelled = live.leases.acquire('org-z', 'dep-5/r1/a1', cancel.signal, () => told());
    await waiting;
    cancel.abort(new Error('destroyed'));
    await expect(cancelled).rejects.toThrow('destroyed');
    const release = await live.leases.acquire('org-z', 'dep-6/r1/a1', never);
    expect(await live.leases.holders('org-z')).toEqual(['dep-6/r1/a1']);
    await release();
  });
});
