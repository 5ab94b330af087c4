import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import type Docker from 'dockerode';

import { buildImageOnce } from './images';

const run = promisify(execFile);

export const BASE_IMAGES = {
  static: 'slipway-test/static-base:1',
  node: 'slipway-test/node-base:20',
  python: 'slipway-test/python-base:3',
} as const;

// Nothing can be pulled here, so every base starts from scratch with Debian's static busybox for /bin/sh
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

// pip would otherwise ask PyPI whether a newer pip exists, and warn about running as root.
const PYTHON_DOCKERFILE = [
  ...BUSYBOX,
  'COPY rootfs/ /',
  'ENV PATH=/usr/local/bin:/usr/bin:/bin HOME=/root PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore',
];

// npm would otherwise ask the registry whether a newer npm exists; there is no registry to ask.
const NPMRC = 'update-notifier=false\nfund=false\naudit=false\n';

/**
 * Builds the local base images the source builder is configured with in tests, once per engine.
 * A tag that already exists is kept: delete it to pick up a new host node.
 */
export async function buildBaseImages(docker: Docker): Promise<{ node: string; static: string; python: string }> {
  await buildOnce(docker, BASE_IMAGES.static, STATIC_DOCKERFILE, async () => undefined);
  await buildOnce(docker, BASE_IMAGES.node, NODE_DOCKERFILE, hostNodeInto);
  await buildOnce(docker, BASE_IMAGES.python, PYTHON_DOCKERFILE, hostPythonInto);
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

/** `file` and every library it links, at the same paths. */
async function withLibrariesInto(rootfs: string, file: string): Promise<void> {
  const { stdout } = await run('ldd', [file]);
  // `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` and the loader `/lib64/ld-linux-x86-64.so.2 (0x…)`;
  // linux-vdso has no file. copyFile follows symlinks, so each lands as a real file where ldd saw it.
  const libs = [...stdout.matchAll(/(\/\S+) \(0x[0-9a-f]+\)/g)].map((m) => m[1]!);
  for (const lib of [file, ...libs]) await copyInto(rootfs, lib, lib);
}

/** The host's node with every library it links, at the same paths, and npm/npx as wrappers around it. */
async function hostNodeInto(rootfs: string): Promise<void> {
  const node = await fs.realpath((await run('sh', ['-c', 'command -v node'])).stdout.trim());
  await withLibrariesInto(rootfs, node);

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

// Left out of the Python base: tests, the static library, GUI toolkits and bytecode caches are most of its size.
const PYTHON_SKIP = new Set(['site-packages', 'test', 'idlelib', 'tkinter', 'turtledemo', 'ensurepip', '__pycache__']);

/**
 * The host's python3 at the same paths: the interpreter, its standard library and native modules with every
 * library they link, and pip (pure Python) from the host's site-packages; `python` and `pip` on PATH.
 */
async function hostPythonInto(rootfs: string): Promise<void> {
  const probe = [
    'import json, os, sys, sysconfig, pip',
    'p = sysconfig.get_paths()',
    'print(json.dumps({"exe": os.path.realpath(sys.executable), "stdlib": p["stdlib"], "purelib": p["purelib"],',
    '  "pip": os.path.dirname(pip.__file__)}))',
  ].join('\n');
  const host = JSON.parse(
    (
      await run('python3', ['-c', probe]).catch((err: Error) => {
        throw new Error(`the Python base image needs the host's python3 with pip: ${err.message}`);
      })
    ).stdout,
  ) as { exe: string; stdlib: string; purelib: string; pip: string };
  await withLibrariesInto(rootfs, host.exe);
  await fs.cp(host.stdlib, path.join(rootfs, host.stdlib), {
    recursive: true,
    filter: (src) => !PYTHON_SKIP.has(path.basename(src)) && !path.basename(src).startsWith('config-'),
  });
  const dynload = path.join(host.stdlib, 'lib-dynload');
  for (const mod of await fs.readdir(dynload).catch(() => [] as string[]))
    if (mod.endsWith('.so')) await withLibrariesInto(rootfs, path.join(dynload, mod));
  await fs.cp(host.pip, path.join(rootfs, host.purelib, 'pip'), {
    recursive: true,
    filter: (src) => path.basename(src) !== '__pycache__',
  });
  await fs.mkdir(path.join(rootfs, 'usr/local/bin'), { recursive: true });
  for (const name of ['python', 'python3']) await fs.symlink(host.exe, path.join(rootfs, 'usr/local/bin', name));
  await fs.writeFile(path.join(rootfs, 'usr/local/bin/pip'), '#!/bin/sh\nexec python3 -m pip "$@"\n', { mode: 0o755 });
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
