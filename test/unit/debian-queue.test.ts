import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A fake `apt-get` and `dpkg-query` first on PATH: the fake records every run, notes any run that starts while
 * another is still going, and can play a lock held by another program (apt's own messages, its exit code 100).
 */
const FAKE_APT = `#!/bin/bash
d="$FAKE_APT_DIR"
timeout=0
for a in "$@"; do case "$a" in DPkg::Lock::Timeout=*) timeout="\${a#DPkg::Lock::Timeout=}";; esac; done
waited=0
while [ -e "$d/held" ]; do
  [ "$waited" = 0 ] && echo "Waiting for cache lock: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)" >&2
  if [ "$waited" -ge "$((timeout * 10))" ]; then
    echo "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)" >&2
    exit 100
  fi
  sleep 0.1; waited=$((waited + 1))
done
mkdir "$d/running" 2>/dev/null || echo overlap >> "$d/log"
echo "run $*" >> "$d/log"
sleep 0.4
if [ "$1" != update ]; then for a in "$@"; do case "$a" in -*|install|*=*) ;; *) touch "$d/installed/$a";; esac; done; fi
rmdir "$d/running"
`;

const FAKE_DPKG_QUERY = `#!/bin/bash
pkg="\${@: -1}"
if [ -e "$FAKE_APT_DIR/installed/$pkg" ]; then printf 'install ok installed'; else exit 1; fi
`;

let dir: string;
const savedPath = process.env.PATH;

/** A fresh copy of the module per test: its queue and "lists updated" state are per process. */
function load(): typeof import('@scripts/stack/debian') {
  let mod!: typeof import('@scripts/stack/debian');
  jest.isolateModules(() => {
    // A synchronous require is what isolateModules scopes; a dynamic import() would need a file extension here.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    mod = require('@scripts/stack/debian') as typeof import('@scripts/stack/debian');
  });
  return mod;
}

function log(): string[] {
  return fs.readFileSync(path.join(dir, 'log'), 'utf8').trim().split('\n');
}

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-apt-'));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.mkdirSync(path.join(dir, 'installed'));
  fs.writeFileSync(path.join(dir, 'bin', 'apt-get'), FAKE_APT, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'bin', 'dpkg-query'), FAKE_DPKG_QUERY, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'log'), '');
  process.env.PATH = `${path.join(dir, 'bin')}:${savedPath}`;
  process.env.FAKE_APT_DIR = dir;
});

afterEach(() => {
  process.env.PATH = savedPath;
  delete process.env.SLIPWAY_APT_LOCK_TIMEOUT_S;
  fs.rmSync(dir, { recursive: true, force: true });
});

const asRoot = process.getuid?.() === 0 ? it : it.skip;

describe('Debian installs', () => {
  asRoot('run one apt-get at a time when several parts miss their packages at once', async () => {
    const { ensureDebianPackages } = load();
    const results = await Promise.all([
      ensureDebianPackages(['docker.io'], 'the engine'),
      ensureDebianPackages(['redis-server'], 'Redis'),
      ensureDebianPackages(['debootstrap'], 'the base image'),
      ensureDebianPackages(['redis-server'], 'Redis again'),
    ]);
    expect(log()).not.toContain('overlap');
    // One update for the process, then one install per missing package; whichever Redis request came second found it
    // installed.
    expect(log().filter((l) => l.startsWith('run') && l.includes(' update'))).toHaveLength(1);
    expect(log().filter((l) => l.includes(' install '))).toHaveLength(3);
    expect(results.flat().sort()).toEqual(['debootstrap', 'docker.io', 'redis-server']);
  });

  asRoot('wait for a lock held by another program, saying so, then install', async () => {
    const { ensureDebianPackages } = load();
    fs.writeFileSync(path.join(dir, 'held'), '');
    setTimeout(() => fs.rmSync(path.join(dir, 'held')), 2000);
    const lines: string[] = [];
    await expect(ensureDebianPackages(['redis-server'], 'Redis', (l) => lines.push(l))).resolves.toEqual([
      'redis-server',
    ]);
    expect(lines).toContain("waiting up to 300 s for Debian's package lock, held by process 4242 (unattended-upgr)");
    expect(fs.existsSync(path.join(dir, 'installed', 'redis-server'))).toBe(true);
  });

  asRoot('fail with one sentence naming the holder when the lock never frees', async () => {
    const { ensureDebianPackages } = load();
    process.env.SLIPWAY_APT_LOCK_TIMEOUT_S = '1';
    fs.writeFileSync(path.join(dir, 'held'), '');
    await expect(ensureDebianPackages(['docker.io'], 'the engine')).rejects.toThrow(
      "Debian's package lock was still held by process 4242 (unattended-upgr) after 1 s; let it finish (or stop it), " +
        'then run this again (SLIPWAY_APT_LOCK_TIMEOUT_S sets the wait)',
    );
    // The queue is not wedged by a failure: the next request runs once the lock frees.
    fs.rmSync(path.join(dir, 'held'));
    await expect(ensureDebianPackages(['docker.io'], 'the engine')).resolves.toEqual(['docker.io']);
  });

  it('do nothing when every package is installed', async () => {
    const { ensureDebianPackages } = load();
    fs.writeFileSync(path.join(dir, 'installed', 'redis-server'), '');
    await expect(ensureDebianPackages(['redis-server'], 'Redis')).resolves.toEqual([]);
    expect(log()).toEqual(['']);
  });
});

describe('package-lock.json', () => {
  it("records every platform's optional binaries, so `npm ci` installs it anywhere and no install rewrites it", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { optionalDependencies?: Record<string, string> }>;
    };
    const missing: string[] = [];
    for (const [where, pkg] of Object.entries(lock.packages)) {
      for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
        const nested = `${where ? `${where}/` : ''}node_modules/${name}`;
        if (!lock.packages[nested] && !lock.packages[`node_modules/${name}`]) missing.push(`${where} → ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
