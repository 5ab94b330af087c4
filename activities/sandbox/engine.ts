import { PassThrough } from 'node:stream';

import type Docker from 'dockerode';
import { pack } from 'tar-stream';

import { APP_UID, APP_USER } from '@shared/build/base-images';
import {
  SANDBOX_CONFIG_LABEL,
  SANDBOX_SESSION_LABEL,
  type SandboxConfig,
  type SandboxRuntime,
} from '@shared/builder/sandbox-store';
import { LABELS } from '@shared/constants';

/**
 * A sandbox container on the engine: what runs in it and the few engine calls a sync makes (copy a tar in, run a
 * command, stop the app). The app runs under a small supervisor loop (PID 1) so a restart or a reinstall keeps the
 * container — and the files already in it — and only replaces the app's process group.
 */

export interface RuntimeSpec {
  /** Which configured base image (BUILD_BASE_IMAGE_*). */
  image: 'node' | 'static' | 'python';
  /** Where the session's files go. */
  appDir: string;
  defaultPort: number;
  defaultStart: string;
  /** The dependency manifest: when it changes, the sync reinstalls before restarting. */
  manifest?: string;
  install?: string[];
  /** A changed file is served as is (no restart): busybox httpd reads from disk on every request. */
  liveFiles: boolean;
}

export const RUNTIMES: Record<SandboxRuntime, RuntimeSpec> = {
  node: {
    image: 'node',
    appDir: '/app',
    defaultPort: 3000,
    // npm start when package.json has a start script, else the usual entry files.
    defaultStart:
      'if node -e "process.exit(require(\'./package.json\').scripts?.start ? 0 : 1)" 2>/dev/null; then exec npm start; ' +
      'elif [ -f server.js ]; then exec node server.js; else exec node index.js; fi',
    manifest: 'package.json',
    install: ['npm', 'install', '--no-audit', '--no-fund', '--no-update-notifier'],
    liveFiles: false,
  },
  python: {
    image: 'python',
    appDir: '/app',
    defaultPort: 8000,
    defaultStart: 'if [ -f app.py ]; then exec python3 app.py; else exec python3 -m http.server "$PORT"; fi',
    manifest: 'requirements.txt',
    install: ['pip', 'install', '-r', 'requirements.txt'],
    liveFiles: false,
  },
  static: {
    image: 'static',
    appDir: '/srv/www',
    defaultPort: 8080,
    defaultStart: 'exec busybox httpd -f -v -p "$PORT" -h /srv/www',
    liveFiles: true,
  },
};

const STATE = '/tmp/slipway';
/**
 * PID 1: waits while the hold file exists (a sync copying or installing), then runs the start command in a session of
 * its own (so a restart signals the whole group: npm and the node it started), and again if it exits.
 */
const SUPERVISOR = [
  `mkdir -p ${STATE}`,
  'while :; do',
  `  while [ -e ${STATE}/hold ]; do sleep 0.1; done`,
  `  setsid sh -c "$SLIPWAY_START" & echo $! > ${STATE}/pid`,
  '  wait $!',
  '  sleep 0.5',
  'done',
].join('\n');

/** Holds the supervisor and ends the app's process group (TERM, then KILL after 3 s); a no-op when none runs. */
const STOP_APP = [
  `mkdir -p ${STATE}; touch ${STATE}/hold`,
  'for round in 1 2 3; do',
  `  pid=$(cat ${STATE}/pid 2>/dev/null) || exit 0`,
  '  kill -TERM -"$pid" 2>/dev/null || exit 0',
  '  for i in $(seq 30); do kill -0 -"$pid" 2>/dev/null || break; sleep 0.1; done',
  '  kill -KILL -"$pid" 2>/dev/null',
  'done',
  'true',
].join('\n');

export const containerName = (sessionId: string) => `slipway-sandbox-${sessionId}`;

/** What an ordinary app needs; everything else stays dropped (as for deployments, engine-local.ts). */
const CAP_ADD = ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'SETGID', 'SETUID', 'NET_BIND_SERVICE', 'KILL'];

export function createSandboxEngine(deps: { docker: Docker; instance: string; bindIp: string }) {
  const { docker } = deps;

  /** Runs `cmd` (no shell unless asked) in the container; its exit code and the end of its output. */
  async function run(
    id: string,
    cmd: string[],
    opts: { workdir?: string; timeoutMs?: number } = {},
  ): Promise<{ exitCode: number | null; output: string }> {
    const exec = await docker.getContainer(id).exec({
      Cmd: cmd,
      AttachStdout: true,
      AttachStderr: true,
      ...(opts.workdir ? { WorkingDir: opts.workdir } : {}),
    });
    const stream = await exec.start({ hijack: true, stdin: false });
    let output = '';
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-8192);
    });
    docker.modem.demuxStream(stream, sink, sink);
    const ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      ended.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), opts.timeoutMs ?? 60_000);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      stream.destroy();
      return { exitCode: null, output };
    }
    const info = await exec.inspect();
    return { exitCode: info.ExitCode ?? null, output };
  }

  return {
    run,

    inspect: (nameOrId: string) =>
      docker
        .getContainer(nameOrId)
        .inspect()
        .catch((err: unknown) => {
          if ((err as { statusCode?: number }).statusCode === 404) return undefined;
          throw err;
        }),

    async remove(nameOrId: string): Promise<void> {
      await docker
        .getContainer(nameOrId)
        .remove({ force: true, v: true })
        .catch((err: unknown) => {
          const code = (err as { statusCode?: number }).statusCode;
          if (code !== 404 && code !== 409) throw err;
        });
    },

    /** A created (not started) container, with the hold file in place so the app waits for its files. */
    async create(input: {
      sessionId: string;
      orgId: string;
      imageId: string;
      network: string;
      config: SandboxConfig;
      configHash: string;
    }): Promise<string> {
      const spec = RUNTIMES[input.config.runtime];
      const portKey = `${input.config.port}/tcp`;
      const container = await docker.createContainer({
        name: containerName(input.sessionId),
        Image: input.imageId,
        Cmd: ['sh', '-c', SUPERVISOR],
        // The app, its installs and the sync's commands all run as the base's unprivileged user.
        User: APP_USER,
        WorkingDir: spec.appDir,
        Env: [
          ...Object.entries(input.config.env).map(([k, v]) => `${k}=${v}`),
          `PORT=${input.config.port}`,
          `SLIPWAY_START=${input.config.startCommand ?? spec.defaultStart}`,
        ],
        ExposedPorts: { [portKey]: {} },
        Labels: {
          [LABELS.managed]: 'true',
          [LABELS.orgId]: input.orgId,
          [LABELS.instance]: deps.instance,
          [SANDBOX_SESSION_LABEL]: input.sessionId,
          [SANDBOX_CONFIG_LABEL]: input.configHash,
        },
        HostConfig: {
          NetworkMode: input.network,
          PortBindings: { [portKey]: [{ HostIp: deps.bindIp, HostPort: '' }] },
          Memory: input.config.limits.memoryMb * 1024 * 1024,
          NanoCpus: Math.round(input.config.limits.cpus * 1e9),
          PidsLimit: input.config.limits.pids,
          // A crash of the container is seen by the next sync, which makes a new one and copies every file.
          RestartPolicy: { Name: 'no' },
          SecurityOpt: ['no-new-privileges'],
          CapDrop: ['ALL'],
          CapAdd: CAP_ADD,
          LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } },
        },
      });
      // The app user's own folders (the app's, the supervisor's state), so it can write there.
      const owned = [spec.appDir.slice(1), STATE.slice(1)];
      await container.putArchive(await tarOf([{ path: `${STATE.slice(1)}/hold`, bytes: Buffer.alloc(0) }], owned), {
        path: '/',
      });
      return container.id;
    },

    /** Writes the files (paths relative to `dir`) into the container, as one tar, owned by the app user. */
    async put(id: string, dir: string, files: { path: string; bytes: Buffer }[]): Promise<void> {
      if (files.length === 0) return;
      await docker.getContainer(id).putArchive(await tarOf(files, foldersOf(files)), { path: dir });
    },

    async removeFiles(id: string, dir: string, paths: string[]): Promise<void> {
      // Paths were validated when saved (no .., no absolute path); `--` ends options, and no shell is involved.
      for (let i = 0; i < paths.length; i += 200) {
        const r = await run(id, ['rm', '-f', '--', ...paths.slice(i, i + 200)], { workdir: dir });
        if (r.exitCode !== 0) throw new Error(`removing files in the sandbox failed: ${r.output.slice(-300)}`);
      }
    },

    stopApp: (id: string) => run(id, ['sh', '-c', STOP_APP], { timeoutMs: 30_000 }),
    startApp: (id: string) => run(id, ['rm', '-f', `${STATE}/hold`]),
  };
}

export type SandboxEngine = ReturnType<typeof createSandboxEngine>;

/** Every folder the files sit in, each before what it holds. */
function foldersOf(files: { path: string }[]): string[] {
  const folders = new Set<string>();
  for (const f of files) {
    const parts = f.path.split('/').slice(0, -1);
    for (let i = 1; i <= parts.length; i++) folders.add(parts.slice(0, i).join('/'));
  }
  return [...folders].sort((a, b) => a.split('/').length - b.split('/').length);
}

/**
 * A tar of `folders` (mode 0755) then regular files (mode 0644), all owned by the app user: the engine applies a
 * header's owner to a folder that already exists too, so a folder named here becomes the app user's.
 */
async function tarOf(files: { path: string; bytes: Buffer }[], folders: string[] = []): Promise<Buffer> {
  const p = pack();
  const owner = { uid: APP_UID, gid: APP_UID };
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    p.on('end', resolve);
    p.on('error', reject);
  });
  for (const name of folders) {
    await new Promise<void>((resolve, reject) => {
      p.entry({ name, mode: 0o755, type: 'directory', ...owner }, (err) => (err ? reject(err) : resolve()));
    });
  }
  for (const f of files) {
    await new Promise<void>((resolve, reject) => {
      p.entry({ name: f.path, size: f.bytes.length, mode: 0o644, type: 'file', ...owner }, f.bytes, (err) =>
        err ? reject(err) : resolve(),
      );
    });
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}
