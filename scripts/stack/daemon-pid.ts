import fs from 'node:fs/promises';

import { ifAbsent } from '@shared/ignore';

import { alive } from './shared-daemon';
import { StackError } from './stack-error';

/**
 * A daemon that does not answer may still be running: stopping (the last stack out sent it SIGTERM and it is
 * taking its containers down) or still starting. Starting a second one then fails on the first's pid file
 * (dockerd: "pid file found, ensure docker is not running"), so the process the pid file names is waited for
 * first, until it answers (use it) or has gone (start one). A pid file whose process is gone is left to the daemon,
 * which replaces it.
 */
export async function settlePidFile(opts: {
  name: string;
  pidFile: string;
  answers: () => Promise<boolean>;
  progress: (line: string) => void;
  timeoutMs?: number;
}): Promise<'answers' | 'gone'> {
  const pid = Number((await fs.readFile(opts.pidFile, 'utf8').catch(ifAbsent(''))).trim());
  if (!alive(pid)) return 'gone';
  const timeoutMs = opts.timeoutMs ?? 30_000;
  opts.progress(
    `${opts.name} (process ${pid}, ${opts.pidFile}) runs but does not answer yet: starting or stopping; waiting up to ${timeoutMs / 1000} s for it to answer or exit`,
  );
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return 'gone';
    if (await opts.answers()) return 'answers';
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new StackError(
    `${opts.name} (process ${pid}, named by ${opts.pidFile}) neither answered nor exited within ${timeoutMs / 1000} s; stop it (kill ${pid}) or wait until it answers, then start again`,
  );
}
