import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

import { ignore } from '@shared/ignore';

import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

/**
 * How long apt waits for Debian's package lock when another program holds it (unattended upgrades, another
 * `npm start`): long enough for a routine upgrade to finish, short enough that a stuck holder is reported.
 */
function lockTimeoutS(): number {
  const v = Number(process.env.SLIPWAY_APT_LOCK_TIMEOUT_S);
  return Number.isInteger(v) && v >= 0 ? v : 300;
}

async function installed(pkg: string): Promise<boolean> {
  return execFileAsync('dpkg-query', ['-W', '-f=${Status}', pkg], { env: process.env }).then(
    ({ stdout }) => stdout.includes('install ok installed'),
    // It exits non-zero for a package it has never seen; without dpkg at all, the apt-get that follows says so.
    ignore('not installed', false),
  );
}

/** apt's own words while it waits for the lock, e.g. "It is held by process 812 (unattended-upgr)". */
const HOLDER = /held by process (\d+)(?: \(([^)]+)\))?/;
const LOCK_LINE = /Could not get lock|Unable to acquire the dpkg frontend lock|Waiting for cache lock/;

function apt(args: string[], progress: (line: string) => void): Promise<void> {
  const timeout = lockTimeoutS();
  return new Promise((resolve, reject) => {
    const child = spawn('apt-get', ['-o', `DPkg::Lock::Timeout=${timeout}`, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let stderr = '';
    let toldWaiting = false;
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (!toldWaiting && /Waiting for cache lock/.test(stderr)) {
        toldWaiting = true;
        const holder = HOLDER.exec(stderr);
        const who = holder ? `process ${holder[1]}${holder[2] ? ` (${holder[2]})` : ''}` : 'another program';
        progress(`waiting up to ${timeout} s for Debian's package lock, held by ${who}`);
      }
    });
    child.once('error', (err) =>
      reject(new StackError(`cannot run apt-get (${err.message}); install the Debian packages by hand as root`)),
    );
    child.once('exit', (code) => {
      if (code === 0) return resolve();
      const lastLine = stderr.trim().split('\n').pop() ?? '';
      if (LOCK_LINE.test(stderr)) {
        const holder = HOLDER.exec(stderr);
        const who = holder ? `process ${holder[1]}${holder[2] ? ` (${holder[2]})` : ''}` : 'another program';
        return reject(
          new StackError(
            `Debian's package lock was still held by ${who} after ${timeout} s; let it finish (or stop it), ` +
              `then run this again (SLIPWAY_APT_LOCK_TIMEOUT_S sets the wait)`,
          ),
        );
      }
      reject(new StackError(`apt-get ${args.join(' ')} failed: ${lastLine}`));
    });
  });
}

/**
 * One apt-get at a time for the whole process: the parts start concurrently, and two installs at once fail on
 * dpkg's lock. Each request waits its turn, then looks again, since an earlier turn may have installed it.
 */
let queue: Promise<unknown> = Promise.resolve();
let updated = false;

function inTurn<T>(work: () => Promise<T>): Promise<T> {
  const turn = queue.then(work, work);
  queue = turn.catch(ignore("the turn's caller gets its error: the queue only waits for it to settle"));
  return turn;
}

/** Installs Debian packages the stack needs (root only); a no-op when they are already there. */
export async function ensureDebianPackages(
  pkgs: string[],
  why: string,
  progress: (line: string) => void = () => undefined,
): Promise<string[]> {
  const missingNow = async () => {
    const missing: string[] = [];
    for (const pkg of pkgs) if (!(await installed(pkg))) missing.push(pkg);
    return missing;
  };
  if ((await missingNow()).length === 0) return [];
  if (process.getuid?.() !== 0) {
    throw new StackError(`${why} needs the Debian package(s) ${(await missingNow()).join(', ')}; install them as root`);
  }
  return inTurn(async () => {
    const missing = await missingNow();
    if (missing.length === 0) return [];
    if (!updated) {
      progress("updating Debian's package lists");
      await apt(['update', '-qq'], progress);
      updated = true;
    }
    progress(`installing ${missing.join(', ')} from Debian (for ${why})`);
    await apt(['install', '-y', '-qq', '--no-install-recommends', ...missing], progress);
    return missing;
  });
}
