import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import {
  cmd,
  dirExists,
  exists,
  httpdCmd,
  readText,
  STAGE_CA,
  staticSiteLines,
  USER_LINE,
  withBuildOnly,
} from '@shared/build/plan-common';

describe('the build-only step', () => {
  it('is the bare install when there is nothing to set', () => {
    expect(withBuildOnly('npm ci', {})).toEqual(['RUN npm ci']);
    expect(withBuildOnly('npm ci', { A: undefined, B: '' })).toEqual(['RUN npm ci']);
  });

  it('sets the variables for the install only, then removes the files and empties the variables', () => {
    expect(
      withBuildOnly('npm ci', {
        NODE_EXTRA_CA_CERTS: STAGE_CA,
        UNSET: undefined,
        NPM_CONFIG_REGISTRY: 'https://r.example/',
      }),
    ).toEqual([
      'ENV NODE_EXTRA_CA_CERTS=/app/.slipway-build/ca.pem NPM_CONFIG_REGISTRY=https://r.example/',
      'RUN npm ci',
      'RUN rm -rf .slipway-build',
      'ENV NODE_EXTRA_CA_CERTS= NPM_CONFIG_REGISTRY=',
    ]);
  });

  it('quotes a value that would otherwise split the ENV line', () => {
    const [env] = withBuildOnly('pip install .', { PIP_EXTRA_INDEX_URL: 'https://a.example/ https://b.example/' });
    expect(env).toBe('ENV PIP_EXTRA_INDEX_URL="https://a.example/ https://b.example/"');
    const [quoted] = withBuildOnly('x', { V: 'say "hi"' });
    expect(quoted).toBe('ENV V="say \\"hi\\""');
  });
});

describe('Dockerfile lines', () => {
  it('writes CMD in exec form, each argument a JSON string', () => {
    expect(cmd(['node', 'server.js'])).toBe('CMD ["node", "server.js"]');
    expect(cmd(['sh', '-c', 'echo "$PORT"'])).toBe('CMD ["sh", "-c", "echo \\"$PORT\\""]');
  });

  it('serves a static site with busybox httpd in the foreground as the app user', () => {
    expect(httpdCmd(8080)).toBe('CMD ["busybox", "httpd", "-f", "-v", "-p", "8080", "-h", "/srv/www"]');
    expect(staticSiteLines('slipway/static', 3000)).toEqual([
      'FROM slipway/static',
      'COPY . /srv/www',
      'EXPOSE 3000',
      USER_LINE,
      'CMD ["busybox", "httpd", "-f", "-v", "-p", "3000", "-h", "/srv/www"]',
    ]);
    expect(USER_LINE).toBe('USER 1000:1000');
  });
});

describe('reading the source', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-plan-'));
    await fs.writeFile(path.join(dir, 'Procfile'), 'web: node server.js\n');
    await fs.mkdir(path.join(dir, 'requirements.txt'));
  });
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it('tells files from folders and from nothing', async () => {
    expect(await exists(path.join(dir, 'Procfile'))).toBe(true);
    expect(await exists(path.join(dir, 'requirements.txt'))).toBe(false);
    expect(await exists(path.join(dir, 'absent'))).toBe(false);
    expect(await dirExists(path.join(dir, 'requirements.txt'))).toBe(true);
    expect(await dirExists(path.join(dir, 'Procfile'))).toBe(false);
    expect(await dirExists(path.join(dir, 'absent'))).toBe(false);
  });

  it('reads a file as text, and no file (absent, or a folder of that name) as undefined', async () => {
    expect(await readText(dir, 'Procfile')).toBe('web: node server.js\n');
    expect(await readText(dir, 'absent')).toBeUndefined();
    expect(await readText(dir, 'requirements.txt')).toBeUndefined();
    expect(await readText(path.join(dir, 'Procfile'), 'below-a-file')).toBeUndefined();
  });
});
