import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { composeSchemaErrors, interpolate, parseYaml, validateKubernetes } from '../helpers/topology-tools';

const root = path.resolve(__dirname, '..', '..');
const composeText = fs.readFileSync(path.join(root, 'docker-compose.temporal.yml'), 'utf8');
const k8sDir = path.join(root, 'examples', 'kubernetes');
/** The Kubernetes version the manifests target (kustomization.yaml says so too). */
const K8S_VERSION = '1.33.0';

/** The secrets the compose file must refuse to start without. */
const SECRETS = {
  TEMPORAL_DB_PASSWORD: 'pg-secret',
  MONGO_ROOT_PASSWORD: 'mongo-secret',
  MONGO_REPLICA_KEY: 'c2xpcHdheS1yZXBsaWNhLWtleQ',
  REDIS_PASSWORD: 'redis-secret',
  MINIO_ROOT_USER: 'slipway',
  MINIO_ROOT_PASSWORD: 'minio-secret',
  SECRETS_KEY: 'ab'.repeat(32),
};

type Service = {
  image?: string;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number>;
  deploy?: { replicas?: number | string };
  healthcheck?: { test: string[] };
  volumes?: string[];
};
type Compose = { services: Record<string, Service> };
let parsed: Compose;
beforeAll(async () => {
  parsed = (await parseYaml(interpolate(composeText, SECRETS)))[0] as Compose;
}, 600_000);
const compose = () => structuredClone(parsed);

describe('docker-compose.temporal.yml: the production shape', () => {
  it('is a valid Compose file by the Compose specification’s schema, which refuses a broken copy', async () => {
    expect(await composeSchemaErrors(compose())).toEqual([]);
    const broken = compose();
    (broken.services.redis as Record<string, unknown>).restart_policy = 'always';
    (broken.services.worker!.deploy as Record<string, unknown>).replicas = [2];
    const errors = await composeSchemaErrors(broken);
    expect(errors.join('\n')).toMatch(/restart_policy/);
    expect(errors.join('\n')).toMatch(/replicas/);
  }, 600_000);

  it('refuses to start without each secret, naming it: no secret has a usable default', () => {
    for (const name of Object.keys(SECRETS)) {
      const env: Record<string, string | undefined> = { ...SECRETS, [name]: undefined };
      expect(() => interpolate(composeText, env)).toThrow(new RegExp(`required variable ${name} `));
    }
    // Nothing secret-looking is written in the file itself.
    expect(composeText).not.toMatch(/change-me|PASSWORD:-|SECRET[A-Z_]*:-/);
  });

  it('runs Temporal on PostgreSQL, a three-member MongoDB replica set, Redis, MinIO and Caddy', () => {
    const { services } = compose();
    expect(services.temporal!.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
    expect(services.postgresql!.image).toMatch(/^postgres:/);
    expect(services['temporal-ui']).toBeDefined();
    for (const m of ['mongo-1', 'mongo-2', 'mongo-3'])
      expect(services[m]!.command).toEqual(expect.arrayContaining(['--replSet', 'rs0']));
    expect(JSON.stringify(services['mongo-init']!.entrypoint)).toMatch(/rs\.initiate/);
    const env = services['api-1']!.environment!;
    expect(env.MONGODB_URL).toBe(
      'mongodb://root:mongo-secret@mongo-1:27017,mongo-2:27017,mongo-3:27017/slipway?replicaSet=rs0&authSource=admin',
    );
    expect(env.REDIS_URL).toBe('redis://:redis-secret@redis:6379');
    expect(env.SECRETS_KEY).toBe(SECRETS.SECRETS_KEY);
    expect(services.minio).toBeDefined();
    expect(services.caddy!.image).toMatch(/^caddy:/);
  });

  it('puts several api replicas behind Caddy, probed on /readyz, and several workers on one task queue', () => {
    const { services } = compose();
    const apis = Object.keys(services).filter((s) => /^api-\d+$/.test(s));
    expect(apis.length).toBeGreaterThanOrEqual(2);
    // Caddy's upstreams are exactly the api services, each on the port the api listens on.
    const upstreams = String(services.caddy!.environment!.SLIPWAY_API_UPSTREAMS).split(' ');
    expect(upstreams.sort()).toEqual(apis.map((a) => `${a}:3000`).sort());
    for (const a of apis)
      expect(services[a]!.environment).toMatchObject({ PORT: 3000, HOST: '0.0.0.0', TRUST_PROXY: 'uniquelocal' });
    expect(services.caddy!.volumes).toContain('./examples/caddy/Caddyfile:/etc/caddy/Caddyfile:ro');
    const caddyfile = fs.readFileSync(path.join(root, 'examples', 'caddy', 'Caddyfile'), 'utf8');
    expect(caddyfile).toMatch(/reverse_proxy \{\$SLIPWAY_API_UPSTREAMS\}/);
    expect(caddyfile).toMatch(/health_uri \/readyz/);

    expect(Number(services.worker!.deploy!.replicas)).toBeGreaterThanOrEqual(2);
    expect(services.worker!.environment!.TEMPORAL_TASK_QUEUE).toBe(services['api-1']!.environment!.TEMPORAL_TASK_QUEUE);
    expect(services.worker!.volumes).toContain('/var/run/docker.sock:/var/run/docker.sock');
  });
});

type Manifest = { kind: string; metadata: { name: string }; spec?: Record<string, unknown> };
type Container = {
  name: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  resources?: { requests?: object; limits?: object };
  readinessProbe?: { httpGet?: { path: string } };
  livenessProbe?: { httpGet?: { path: string } };
};

describe('examples/kubernetes: the same shape as manifests', () => {
  const files = fs
    .readdirSync(k8sDir)
    .filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml')
    .map((f) => path.join(k8sDir, f));
  const docs = new Map<string, Manifest[]>();
  let manifests: Manifest[] = [];
  beforeAll(async () => {
    for (const f of [...files, path.join(k8sDir, 'kustomization.yaml')])
      docs.set(f, (await parseYaml(fs.readFileSync(f, 'utf8'))) as Manifest[]);
    manifests = files.flatMap((f) => docs.get(f)!);
  }, 600_000);
  const byName = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name)!;
  const containers = (m: Manifest) =>
    (m.spec as { template: { spec: { containers: Container[]; initContainers?: Container[] } } }).template.spec;

  it(`are valid against Kubernetes ${K8S_VERSION}'s schemas (strict), which refuse a broken copy`, async () => {
    const valid = await validateKubernetes(files, K8S_VERSION);
    expect(valid).toEqual({ ok: true, output: expect.any(String) });

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-k8s-'));
    try {
      // A replica count as text, and (strict) a misspelt field: each refused.
      const api = path.join(dir, 'api.yaml');
      fs.writeFileSync(
        api,
        fs.readFileSync(path.join(k8sDir, 'api.yaml'), 'utf8').replace('replicas: 3', "replicas: 'three'"),
      );
      const worker = path.join(dir, 'worker.yaml');
      fs.writeFileSync(
        worker,
        fs.readFileSync(path.join(k8sDir, 'worker.yaml'), 'utf8').replace('livenessProbe:', 'livenesProbe:'),
      );
      const refused = await validateKubernetes([api, worker], K8S_VERSION);
      expect(refused.ok).toBe(false);
      expect(refused.output).toMatch(/deployment\/api .*replicas/);
      expect(refused.output).toMatch(/deployment\/worker .*livenesProbe/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  it('lists every manifest file in the kustomization, and no Secret with values', () => {
    const [kustomization] = docs.get(path.join(k8sDir, 'kustomization.yaml')) as unknown as [{ resources: string[] }];
    const listed = kustomization.resources.map((r) => path.join(k8sDir, r)).sort();
    expect(listed).toEqual(files.filter((f) => !f.endsWith('secrets.example.yaml')).sort());
    for (const f of listed) expect(docs.get(f)!.map((m) => m.kind)).not.toContain('Secret');
  });

  it('runs N api replicas probed on /readyz and /healthz, and N workers, with resources and the Secret referenced', () => {
    const api = byName('Deployment', 'api');
    const worker = byName('Deployment', 'worker');
    expect(api.spec!.replicas).toBeGreaterThanOrEqual(2);
    expect(worker.spec!.replicas).toBeGreaterThanOrEqual(2);
    const [apiC] = containers(api).containers;
    expect(apiC!.readinessProbe!.httpGet!.path).toBe('/readyz');
    expect(apiC!.livenessProbe!.httpGet!.path).toBe('/healthz');
    for (const m of manifests.filter((x) => ['Deployment', 'StatefulSet', 'Job'].includes(x.kind)))
      for (const c of [...containers(m).containers, ...(containers(m).initContainers ?? [])]) {
        expect([m.metadata.name, c.name, c.resources?.requests && c.resources.limits ? 'ok' : 'no resources']).toEqual([
          m.metadata.name,
          c.name,
          'ok',
        ]);
        // A secret is read from the Secret, never written as a value.
        for (const e of c.env ?? [])
          expect([m.metadata.name, e.name, /PASSWORD|SECRET|KEY/.test(e.name) && e.value !== undefined]).toEqual([
            m.metadata.name,
            e.name,
            false,
          ]);
      }
    for (const m of [api, worker])
      expect(containers(m).containers[0]!.envFrom).toContainEqual({ secretRef: { name: 'slipway' } });
    expect(byName('StatefulSet', 'mongodb').spec!.replicas).toBe(3);
    expect((byName('ConfigMap', 'slipway') as unknown as { data: Record<string, string> }).data.TRUST_PROXY).toBe(
      'uniquelocal',
    );
    for (const [kind, name] of [
      ['StatefulSet', 'redis'],
      ['StatefulSet', 'minio'],
      ['Deployment', 'caddy'],
      ['Service', 'temporal-frontend'],
      ['StatefulSet', 'docker'],
    ])
      expect(byName(kind!, name!)).toBeDefined();
  });
});
