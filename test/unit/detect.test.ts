import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { BuildPlanError, planBuild } from '@shared/build/detect';
import { hostRegistries } from '@shared/build/registries';

const BASES = { node: 'slipway/node', static: 'slipway/static', python: 'slipway/python' };

describe('planBuild', () => {
  let dir: string;
  let ca: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-detect-'));
    ca = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-ca-')), 'bundle.pem');
    await fs.writeFile(ca, '-----BEGIN CERTIFICATE-----\nfixture\n-----END CERTIFICATE-----\n');
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(path.dirname(ca), { recursive: true, force: true });
  });

  const write = async (files: Record<string, string>) => {
    for (const [name, content] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fs.writeFile(path.join(dir, name), content);
    }
  };
  const plan = (extra: { dockerfilePath?: string; registries?: Record<string, unknown> } = {}) =>
    planBuild(dir, { port: 8080, baseImages: BASES, registries: { caBundle: ca }, ...extra });
  /** The lines of the last stage: what the image we run is made of. */
  const finalStage = (generated = '') => generated.slice(generated.lastIndexOf('\nFROM '));

  it('builds a root Dockerfile as is, or the one named by dockerfilePath', async () => {
    await write({ Dockerfile: 'FROM x', 'docker/prod.Dockerfile': 'FROM y', 'package.json': '{}' });
    expect(await plan()).toMatchObject({ kind: 'dockerfile', dockerfile: 'Dockerfile' });
    expect(await plan({ dockerfilePath: './docker/prod.Dockerfile' })).toMatchObject({
      kind: 'dockerfile',
      dockerfile: 'docker/prod.Dockerfile',
    });
    await expect(plan({ dockerfilePath: 'missing/Dockerfile' })).rejects.toThrow(/was not found in the source/);
    await expect(plan({ dockerfilePath: '../Dockerfile' })).rejects.toThrow(/relative path inside the source/);
    await expect(plan({ dockerfilePath: '/etc/Dockerfile' })).rejects.toThrow(BuildPlanError);
    // A source's own Dockerfile never gets the build-only files.
    await expect(fs.stat(path.join(dir, '.slipway-build'))).rejects.toThrow();
  });

  it('installs a Node app in a build stage with the CA bundle, then copies only the app into the final stage', async () => {
    await write({ 'package.json': JSON.stringify({ scripts: { build: 'tsc', start: 'node dist/main.js' } }) });
    const p = await plan();
    expect(p).toMatchObject({ kind: 'node', dockerfile: 'Dockerfile.slipway' });
    expect(p.generated).toBe(
      [
        'FROM slipway/node AS build',
        'WORKDIR /app',
        'COPY . .',
        'ENV NODE_EXTRA_CA_CERTS=/app/.slipway-build/ca.pem',
        'RUN npm install --no-audit --no-fund',
        'RUN rm -rf .slipway-build',
        'ENV NODE_EXTRA_CA_CERTS=',
        'RUN npm run build',
        '',
        'FROM slipway/node',
        'WORKDIR /app',
        'COPY --from=build --chown=1000:1000 /app /app',
        'ENV NODE_ENV=production PORT=8080',
        'EXPOSE 8080',
        'USER 1000:1000',
        'CMD ["npm", "start"]',
        '',
      ].join('\n'),
    );
    expect(finalStage(p.generated)).not.toMatch(/slipway-build|CA_CERTS/);
    expect(await fs.readFile(path.join(dir, 'Dockerfile.slipway'), 'utf8')).toBe(p.generated);
    expect(await fs.readFile(path.join(dir, '.slipway-build', 'ca.pem'), 'utf8')).toBe(await fs.readFile(ca, 'utf8'));
    const ignore = await fs.readFile(path.join(dir, '.dockerignore'), 'utf8');
    expect(ignore).toBe('.git\nnode_modules\nDockerfile.slipway\n!.slipway-build\n!.slipway-build/**\n');
    expect(p.steps).toEqual(['npm install', 'npm run build', 'npm start']);
  });

  it("keeps the source's .dockerignore and re-includes the build-only folder after its rules", async () => {
    await write({ 'package.json': '{"main":"a.js"}', 'a.js': '', '.dockerignore': '.*\n*.md' });
    await plan();
    expect(await fs.readFile(path.join(dir, '.dockerignore'), 'utf8')).toBe(
      '.*\n*.md\nDockerfile.slipway\n!.slipway-build\n!.slipway-build/**\n',
    );
  });

  it('uses npm ci with npm lockfiles only, the main file, then server.js, and passes the host registry', async () => {
    await write({ 'package.json': JSON.stringify({ main: 'app.js' }), 'package-lock.json': '{}', 'app.js': '' });
    let p = await plan({ registries: { caBundle: ca, npmRegistry: 'https://npm.mirror.example/' } });
    expect(p.generated).toContain(
      'ENV NODE_EXTRA_CA_CERTS=/app/.slipway-build/ca.pem NPM_CONFIG_REGISTRY=https://npm.mirror.example/',
    );
    expect(p.generated).toContain('RUN npm ci --no-audit --no-fund');
    expect(p.generated).not.toContain('npm run build');
    expect(p.generated).toContain('CMD ["node", "app.js"]');

    await fs.rm(path.join(dir, 'package-lock.json'));
    await write({ 'yarn.lock': '', 'package.json': JSON.stringify({ main: 'gone.js' }), 'server.js': '' });
    p = await plan({ registries: {} });
    expect(p.generated).toContain('RUN npm install --no-audit --no-fund');
    expect(p.generated).not.toMatch(/ENV NODE_EXTRA|slipway-build/);
    expect(p.generated).toContain('CMD ["node", "server.js"]');
    expect(p.steps[0]).toMatch(/yarn.lock is not npm's lockfile/);
  });

  it("starts a framework's build output when package.json has no start script", async () => {
    await write({ 'package.json': JSON.stringify({ scripts: { build: 'next build' }, dependencies: { next: '14' } }) });
    const p = await plan();
    expect(p.kind).toBe('node');
    expect(p.generated).toContain('RUN npm run build');
    expect(p.generated).toContain('CMD ["node_modules/.bin/next", "start", "-p", "8080"]');
  });

  it('serves what `npm run build` writes when there is no server, from the static base', async () => {
    await write({ 'package.json': JSON.stringify({ scripts: { build: 'vite build' } }), 'index.html': 'src' });
    const p = await plan();
    expect(p.kind).toBe('static');
    expect(p.generated).toContain('RUN npm run build\nRUN for d in dist build out; do');
    expect(p.generated).toContain('npm run build wrote no dist/, build/ or out/ folder with an index.html');
    expect(finalStage(p.generated)).toBe(
      [
        '\nFROM slipway/static',
        'COPY --from=build /site /srv/www',
        'EXPOSE 8080',
        'USER 1000:1000',
        'CMD ["busybox", "httpd", "-f", "-v", "-p", "8080", "-h", "/srv/www"]',
        '',
      ].join('\n'),
    );
  });

  it('says in plain words what is wrong with a Node app that cannot start, or a broken package.json', async () => {
    await write({ 'package.json': '{}' });
    await expect(plan()).rejects.toThrow(/no "start" script.*add a "start" script, e.g. "start": "node server.js"/);
    await write({ 'package.json': '{"main": "gone.js"}' });
    await expect(plan()).rejects.toThrow(/"main" names gone.js, which is not in the source/);
    await write({ 'package.json': '{\n  "name": "x",\n  "scripts": { "start": "node ." }\n  "main": "a.js"\n}' });
    await expect(plan()).rejects.toThrow(/^package.json is not valid JSON at line 4, column 3 \(.+\); fix it/);
    await write({ 'package.json': '[1]' });
    await expect(plan()).rejects.toThrow(/must hold a JSON object/);
  });

  it('serves a plain static site with busybox httpd on the deployment port, without build-only files', async () => {
    await write({ 'index.html': '<h1>hi</h1>' });
    expect((await plan()).generated).toBe(
      [
        'FROM slipway/static',
        'COPY . /srv/www',
        'EXPOSE 8080',
        'USER 1000:1000',
        'CMD ["busybox", "httpd", "-f", "-v", "-p", "8080", "-h", "/srv/www"]',
        '',
      ].join('\n'),
    );
    await expect(fs.stat(path.join(dir, '.slipway-build'))).rejects.toThrow();
  });

  it('installs Python requirements into /opt/venv in a build stage with the CA bundle and the host index', async () => {
    await write({ 'requirements.txt': 'flask\n', Procfile: 'web: gunicorn app:app -b 0.0.0.0:$PORT\n' });
    const p = await plan({ registries: { caBundle: ca, pipIndexUrl: 'https://pypi.mirror.example/simple/' } });
    expect(p.kind).toBe('python');
    expect(p.generated).toContain(
      [
        'COPY . .',
        'ENV PIP_CERT=/app/.slipway-build/ca.pem PIP_INDEX_URL=https://pypi.mirror.example/simple/',
        'RUN pip install --no-cache-dir -r requirements.txt',
        'RUN rm -rf .slipway-build',
        'ENV PIP_CERT= PIP_INDEX_URL=',
      ].join('\n'),
    );
    const last = finalStage(p.generated);
    expect(last).toContain('COPY --from=build /opt/venv /opt/venv\nCOPY --from=build --chown=1000:1000 /app /app');
    expect(last).toMatch(/\nUSER 1000:1000\nCMD /);
    expect(last).not.toMatch(/slipway-build|PIP_CERT|PIP_INDEX/);
    expect(p.generated).toContain('CMD ["sh", "-c", "gunicorn app:app -b 0.0.0.0:$PORT"]');
  });

  it('serves a WSGI or ASGI app with gunicorn or uvicorn when listed, else runs app.py or main.py', async () => {
    await write({
      'requirements.txt': 'Flask==3.0.3\ngunicorn>=22\n',
      'app.py': 'from flask import Flask\nweb = Flask(__name__)\n',
    });
    expect((await plan()).generated).toContain(
      'CMD ["gunicorn", "--bind", "0.0.0.0:8080", "--access-logfile", "-", "app:web"]',
    );
    await fs.rm(path.join(dir, 'app.py'));
    await write({ 'requirements.txt': 'fastapi\nuvicorn[standard]\n', 'main.py': 'api = FastAPI()\n' });
    expect((await plan()).generated).toContain('CMD ["uvicorn", "main:api", "--host", "0.0.0.0", "--port", "8080"]');
    await write({ 'requirements.txt': 'requests\n', 'main.py': 'print(1)\n' });
    expect((await plan()).generated).toContain('CMD ["python", "main.py"]');
    await fs.rm(path.join(dir, 'main.py'));
    await expect(plan()).rejects.toThrow(
      /requirements.txt found but nothing to run: add app.py, main.py or a Procfile/,
    );
    await write({ 'requirements.txt': 'gunicorn\n', 'lib.py': '' });
    await expect(plan()).rejects.toThrow(/gunicorn is listed but no module defines an app object/);
  });

  it('installs a pyproject.toml project with pip install .', async () => {
    await write({
      'pyproject.toml': '[project]\nname = "x"\ndependencies = ["flask", "gunicorn>=22"]\n',
      'app.py': 'app = Flask(__name__)\n',
    });
    const p = await plan();
    expect(p.generated).toContain('RUN pip install --no-cache-dir .');
    expect(p.generated).toContain('"app:app"]');
  });

  it('names what it looks for when it recognises nothing, and never overwrites a file of the same name', async () => {
    await write({ 'notes.txt': 'x' });
    await expect(plan()).rejects.toThrow(/add a Dockerfile, or a package.json/);
    await write({ 'index.html': 'x', 'Dockerfile.slipway': 'mine' });
    expect((await plan()).dockerfile).toBe('Dockerfile.slipway-2');
    expect(await fs.readFile(path.join(dir, 'Dockerfile.slipway'), 'utf8')).toBe('mine');
  });
});

describe('hostRegistries', () => {
  it("reads the host's CA bundle and registries, and never hands on a registry URL with credentials", async () => {
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-home-'));
    const bundle = path.join(home, 'ca.pem');
    await fs.writeFile(bundle, 'pem');
    await fs.writeFile(path.join(home, '.npmrc'), 'fund=false\nregistry=https://npm.mirror.example/\n');
    try {
      expect(
        hostRegistries({ SSL_CERT_FILE: bundle, PIP_INDEX_URL: 'https://pypi.mirror.example/simple' }, home),
      ).toMatchObject({
        caBundle: bundle,
        npmRegistry: 'https://npm.mirror.example/',
        pipIndexUrl: 'https://pypi.mirror.example/simple',
      });
      const withToken = hostRegistries(
        {
          NPM_CONFIG_REGISTRY: 'https://u:tok@npm.example/',
          PIP_EXTRA_INDEX_URL: 'https://a.example/ https://u:p@b.example/',
        },
        home,
      );
      expect(withToken.npmRegistry).toBeUndefined();
      expect(withToken.pipExtraIndexUrls).toEqual(['https://a.example/']);
    } finally {
      await fs.rm(home, { recursive: true, force: true });
    }
  });
});
