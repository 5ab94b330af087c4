import path from 'node:path';

import Docker from 'dockerode';

import { ignore } from '@shared/ignore';

import { settlePidFile } from './daemon-pid';
import { ensureDebianPackages } from './debian';
import { EXTERNAL, type Part, type PartResult } from './part';
import { startServer } from './process';
import { sharedDaemon } from './shared-daemon';
import { StackError } from './stack-error';

const DOCKER_SOCKET = '/var/run/docker.sock';
const DOCKER_PID_FILE = '/var/run/docker.pid';
/** `npm start` and `npm test` may share one engine: the last stack out stops a dockerd a stack started. */
const dockerd = sharedDaemon('dockerd');

async function dockerAnswers(socketPath: string): Promise<boolean> {
  return new Docker({ socketPath, timeout: 2000 })
    .ping()
    .then(() => true, ignore('a probe: any failure is an engine that does not answer (yet)', false));
}

export const docker: Part = {
  name: 'docker',
  async start(ctx): Promise<PartResult> {
    if (process.env.DOCKER_HOST) return EXTERNAL;
    const found = async (): Promise<PartResult> => {
      const lease = await dockerd.found();
      return { env: { DOCKER_HOST: `unix://${DOCKER_SOCKET}` }, started: lease, external: lease.length === 0 };
    };
    if (await dockerAnswers(DOCKER_SOCKET)) return found();
    // One that runs without answering (a stack's dockerd still stopping) is waited for: a second would not start.
    const answers = () => dockerAnswers(DOCKER_SOCKET);
    const before = await settlePidFile({ name: 'dockerd', pidFile: DOCKER_PID_FILE, answers, progress: ctx.progress });
    if (before === 'answers') return found();
    if (process.getuid?.() !== 0) {
      throw new StackError(
        `no Docker Engine answers on ${DOCKER_SOCKET} and only root can start one here; start Docker or set DOCKER_HOST`,
      );
    }
    if ((await ensureDebianPackages(['docker.io'], 'the engine_local provider', ctx.progress)).length > 0) {
      ctx.progress("installed Debian's docker.io");
    }
    ctx.progress('starting dockerd');
    const proc = await startServer(
      'dockerd',
      ['dockerd', 'dockerd', ['--host', `unix://${DOCKER_SOCKET}`], { logFile: path.join(ctx.dataDir, 'dockerd.log') }],
      () => dockerAnswers(DOCKER_SOCKET),
      undefined,
      ctx.signal,
    );
    return { env: { DOCKER_HOST: `unix://${DOCKER_SOCKET}` }, started: [await dockerd.started(proc)], external: false };
  },
};
