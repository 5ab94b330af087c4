import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import type Docker from 'dockerode';

import { buildImageOnce } from './images';

const run = promisify(execFile);

export const BASE_IMAGES = { static: 'slipway-test/static-base:1', node: 'slipway-test/node-base:20' } as const;

// Nothing can be pulled here, so both bases start from scratch with Debian's static busybox for /bin/sh
// (RUN lines and `sh -c` need it) and httpd.
const BUSYBOX = [
  'FROM scratch',
  'COPY busybox /bin/busybox',
  'RUN ["/bin/busybox", "--install", "-s", "/bin"]',
  'RUN mkdir -p /tmp /root /srv/www && chmod 1777 /tmp',
];

const STATIC_DOCKERFILE = [
  ...BUSYBOX,
  'EXPOSE 8080',
  // The generated static Dockerfile uses this same CMD with its own port.
  'CMD ["httpd","-f","-v","-p","8080","-h","/srv/www"]',
];

const NODE_DOCKERFILE = [...BUSYBOX, 'COPY rootfs/ /', 'ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/root'];

// npm would otherwise ask the registry whether a newer npm exists; there is no registry to ask.
const NPMRC = 'update-notifier=false\nfund=false\naudit=false\n';

/**
 * Builds the local base images the source builder is configured with in tests, once per engine.
 * A tag that already exists is kept: delete it to pick up a new host node.
 */
export async function buildBaseImages(docker: Docker): Promise<{ node: string; static: string }> {
  await buildOnce(docker, BASE_IMAGES.static, STATIC_DOCKERFILE, async () => undefined);
  await buildOnce(docker, BASE_IMAGES.node, NODE_DOCKERFILE, hostNodeInto);
  return { ...BASE_IMAGES };
}

/** A busybox base with `prepare`'s files under rootfs/. */
function buildOnce(docker: Docker, tag: string, dockerfile: string[], prepare: (rootfs: string) => Promise<void>) {
  return buildImageOnce(docker, tag, async (context) => {
    await fs.writeFile(path.join(context, 'Dockerfile'), `${dockerfile.join('\n')}\n`);
    await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
    await fs.mkdir(path.join(context, 'rootfs'));
    await prepare(path.join(context, 'rootfs'));
  });
}

/** The host's node with every library it links, at the same paths, and npm/npx as wrappers around it. */
async function hostNodeInto(rootfs: string): Promise<void> {
  const node = await fs.realpath((await run('sh', ['-c', 'command -v node'])).stdout.trim());
  const { stdout } = await run('ldd', [node]);
  // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` and the loader `/lib64/ld-linux-x86-64.so.2 (0x…)`;
  // linux-vdso has no file. copyFile follows symlinks, so each lands as a real file where ldd saw it.
  const libs = [...stdout.matchAll(/(\/\S+) \(0x[0-9a-f]+\)/g)].map((m) => m[1]!);
  for (const file of [node, ...libs]) await copyInto(rootfs, file, file);

  const npm = await hostNpmDir();
  const target = path.join(rootfs, 'usr/local/lib/node_modules/npm');
  // docs/ and man/ are half of npm's size and only `npm help` reads them.
  await fs.cp(npm, target, { recursive: true, filter: (src) => !['docs', 'man'].includes(path.relative(npm, src)) });
  await fs.mkdir(path.join(rootfs, 'usr/local/bin'), { recursive: true });
  for (const [bin, cli] of [
    ['npm', 'npm-cli.js'],
    ['npx', 'npx-cli.js'],
  ] as const) {
    const wrapper = `#!/bin/sh\nexec node /usr/local/lib/node_modules/npm/bin/${cli} "$@"\n`;
    await fs.writeFile(path.join(rootfs, 'usr/local/bin', bin), wrapper, { mode: 0o755 });
  }
  // npm reads its global config from <node's prefix>/etc/npmrc, node's prefix being /usr here.
  await fs.mkdir(path.join(rootfs, path.dirname(path.dirname(node)), 'etc'), { recursive: true });
  await fs.writeFile(path.join(rootfs, path.dirname(path.dirname(node)), 'etc', 'npmrc'), NPMRC);
}

/** npm's package directory, found from the `npm` on PATH (a symlink into it, or a script under it). */
async function hostNpmDir(): Promise<string> {
  const cli = await fs.realpath((await run('sh', ['-c', 'command -v npm'])).stdout.trim());
  for (let dir = path.dirname(cli); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const pkg = await fs.readFile(path.join(dir, 'package.json'), 'utf8').catch(() => undefined);
    if (pkg && (JSON.parse(pkg) as { name?: string }).name === 'npm') return dir;
  }
  throw new Error(`no npm package above ${cli}`);
}

async function copyInto(rootfs: string, from: string, to: string): Promise<void> {
  const dest = path.join(rootfs, to);
  await fs.mkdir(path.dirname(dest), { recursive: true });
  await fs.copyFile(from, dest);
}
