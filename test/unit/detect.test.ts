import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { BuildPlanError, planBuild } from '../../shared/build/detect';

const BASES = { node: 'node:20-slim', static: 'busybox:1.37', python: 'python:3.12-slim' };

describe('planBuild', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-detect-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  const write = async (files: Record<string, string>) => {
    for (const [name, content] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fs.writeFile(path.join(dir, name), content);
    }
  };
  const plan = (extra: { dockerfilePath?: string } = {}) => planBuild(dir, { port: 8080, baseImages: BASES, ...extra });

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
  });

  it('generates a Node Dockerfile: install, build script, NODE_ENV after the build, start script', async () => {
    await write({ 'package.json': JSON.stringify({ scripts: { build: 'tsc', start: 'node dist/main.js' } }) });
    const p = await plan();
    expect(p).toMatchObject({ kind: 'node', dockerfile: 'Dockerfile.slipway' });
    expect(p.generated).toBe(
      [
        'FROM node:20-slim',
        'WORKDIR /app',
        'COPY . .',
        'RUN npm install --no-audit --no-fund',
        'RUN npm run build',
        'ENV NODE_ENV=production PORT=8080',
        'EXPOSE 8080',
        'CMD ["npm", "start"]',
        '',
      ].join('\n'),
    );
    expect(await fs.readFile(path.join(dir, 'Dockerfile.slipway'), 'utf8')).toBe(p.generated);
    expect(await fs.readFile(path.join(dir, '.dockerignore'), 'utf8')).toContain('node_modules');
  });

  it('uses npm ci with a lockfile, skips a missing build script and falls back to main or server.js', async () => {
    await write({ 'package.json': JSON.stringify({ main: 'app.js' }), 'package-lock.json': '{}', 'app.js': '' });
    const p = await plan();
    expect(p.generated).toContain('RUN npm ci --no-audit --no-fund');
    expect(p.generated).not.toContain('npm run build');
    expect(p.generated).toContain('CMD ["node", "app.js"]');
  });

  it('says what to add when a Node app has no way to start, or its package.json is broken', async () => {
    await write({ 'package.json': '{}' });
    await expect(plan()).rejects.toThrow(/add a "start" script/);
    await write({ 'package.json': '{ nope' });
    await expect(plan()).rejects.toThrow(/package.json is not valid JSON/);
  });

  it('serves a static site with httpd on the deployment port', async () => {
    await write({ 'index.html': '<h1>hi</h1>' });
    expect((await plan()).generated).toBe(
      [
        'FROM busybox:1.37',
        'COPY . /srv/www',
        'EXPOSE 8080',
        'CMD ["httpd", "-f", "-v", "-p", "8080", "-h", "/srv/www"]',
        '',
      ].join('\n'),
    );
  });

  it('runs Python from a Procfile web line, else app.py or main.py', async () => {
    await write({ 'requirements.txt': 'flask\n', Procfile: 'web: gunicorn app:app -b 0.0.0.0:$PORT\n' });
    const p = await plan();
    expect(p.kind).toBe('python');
    expect(p.generated).toContain('RUN pip install --no-cache-dir -r requirements.txt');
    expect(p.generated).toContain('CMD ["sh", "-c", "gunicorn app:app -b 0.0.0.0:$PORT"]');
    await fs.rm(path.join(dir, 'Procfile'));
    await write({ 'main.py': '' });
    expect((await plan()).generated).toContain('CMD ["python", "main.py"]');
    await fs.rm(path.join(dir, 'main.py'));
    await expect(plan()).rejects.toThrow(/app.py, main.py or a Procfile/);
  });

  it('names what it looks for when it recognises nothing, and never overwrites a file of the same name', async () => {
    await write({ 'notes.txt': 'x' });
    await expect(plan()).rejects.toThrow(/add a Dockerfile, or a package.json/);
    await write({ 'index.html': 'x', 'Dockerfile.slipway': 'mine' });
    expect((await plan()).dockerfile).toBe('Dockerfile.slipway-2');
    expect(await fs.readFile(path.join(dir, 'Dockerfile.slipway'), 'utf8')).toBe('mine');
  });
});
