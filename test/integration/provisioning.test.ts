import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { StackError } from '@scripts/stack/stack-error';
import { ensureGoTool, type GoTool } from '@scripts/stack/tools';

/**
 * Tool provisioning on a real Go toolchain and the real module proxy, with a module small enough to build in a
 * test: golang.org/x/example/hello, pinned.
 */
const HELLO: GoTool = {
  module: 'golang.org/x/example/hello',
  version: 'v0.0.0-20250915201037-7f05d217867b',
  pkg: '.',
  insteadVar: 'HELLO_ADDRESS',
};

let root: string;
let cache: string;
const saved = { SLIPWAY_CACHE_DIR: process.env.SLIPWAY_CACHE_DIR, GOCACHE: process.env.GOCACHE };

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-provisioning-'));
  // Two levels that do not exist: a brand-new machine has no ~/.cache/slipway (nor, often, ~/.cache).
  cache = path.join(root, 'home', '.cache', 'slipway');
  process.env.SLIPWAY_CACHE_DIR = cache;
});

afterEach(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  // A fresh GOCACHE holds read-only entries; make them removable.
  await promisify(execFile)('chmod', ['-R', 'u+w', root]);
  fs.rmSync(root, { recursive: true, force: true });
});

/** Process ids of the members of a process group, read from /proc (field 5 of stat is the group). */
function groupMembers(pgid: number): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return Number(fields[2]) === pgid && fields[0] !== 'Z' ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

/** The `go build` process this test's build started: its working directory is the scratch copy under `root`. */
function goBuildUnder(dir: string): number | undefined {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readlinkSync(`/proc/${entry}/cwd`).startsWith(dir)) {
        const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
        if (cmd[1] === 'build') return Number(entry);
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return undefined;
}

describe('provisioning a Go tool', () => {
  it('builds into a cache directory that does not exist yet, and removes its scratch copy', async () => {
    expect(fs.existsSync(cache)).toBe(false);

    const first = await ensureGoTool('hello', HELLO);

    expect(first).toEqual({ binary: path.join(cache, 'tools', `hello-${HELLO.version}`, 'bin', 'hello'), built: true });
    expect(execFileSync(first.binary).toString()).toBe('Hello, world!\n');
    expect(fs.readdirSync(path.join(cache, 'build'))).toEqual([]);
    expect(fs.readdirSync(path.dirname(first.binary))).toEqual(['hello']);
    expect(await ensureGoTool('hello', HELLO)).toEqual({ binary: first.binary, built: false });
  });

  it("shows go's own reason when the module proxy does not serve the version", async () => {
    const missing = { ...HELLO, version: 'v0.0.0-20000101000000-000000000000' };

    const failure = ensureGoTool('hello', missing);

    await expect(failure).rejects.toThrow(StackError);
    // Go reports this as JSON on stdout with an empty stderr; the reason must still reach the user.
    await expect(failure).rejects.toThrow(
      /^cannot build hello v0\.0\.0-20000101000000-000000000000: go mod download golang\.org\/x\/example\/hello@v0\.0\.0-20000101000000-000000000000 failed: golang\.org\/x\/example\/hello@v0\.0\.0-20000101000000-000000000000: \S.*; fix that, or set HELLO_ADDRESS to use an existing server$/,
    );
  });

  it('says in one line that the Go toolchain is too old for the module', async () => {
    const have = execFileSync('go', ['env', 'GOVERSION']).toString().trim().replace(/^go/, '');

    await expect(ensureGoTool('hello', { ...HELLO, minGo: '1.999' })).rejects.toThrow(
      `cannot build hello ${HELLO.version}: it needs Go 1.999 or newer and \`go\` on PATH is ${have}; install Go 1.999+; fix that, or set HELLO_ADDRESS to use an existing server`,
    );
    expect(fs.readdirSync(path.join(cache, 'build'))).toEqual([]);
  });

  it('stops a build that passes its time limit, naming the tool, and leaves nothing behind', async () => {
    await expect(ensureGoTool('hello', HELLO, { timeoutMs: 1 })).rejects.toThrow(
      `cannot build hello ${HELLO.version}: go build did not finish within 1 ms; fix that, or set HELLO_ADDRESS to use an existing server`,
    );
    expect(fs.readdirSync(path.join(cache, 'build'))).toEqual([]);
    expect(fs.readdirSync(path.join(cache, 'tools', `hello-${HELLO.version}`, 'bin'))).toEqual([]);
  });

  it('Ctrl-C during a build kills the build with every compiler it started and removes the scratch copy', async () => {
    // An empty build cache makes go compile the runtime first: seconds of work with compilers running.
    process.env.GOCACHE = path.join(root, 'gocache');
    const interrupted = new AbortController();
    let group: number[] = [];
    let pgid: number | undefined;
    const watch = (async () => {
      // The build is detached into its own group (pgid = go's pid); wait until go has compilers running in it.
      while (group.length < 2) {
        pgid = goBuildUnder(path.join(cache, 'build'));
        group = pgid ? groupMembers(pgid) : [];
        await new Promise((r) => setTimeout(r, 20));
      }
      interrupted.abort();
    })();

    const build = ensureGoTool('hello', HELLO, { signal: interrupted.signal });

    await expect(build).rejects.toThrow(`building hello ${HELLO.version} stopped: start-up was interrupted`);
    await watch;
    // SIGKILL is delivered as each process next runs; give the kernel a moment, then look.
    for (let i = 0; i < 100 && groupMembers(pgid!).length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(groupMembers(pgid!)).toEqual([]);
    expect(fs.readdirSync(path.join(cache, 'build'))).toEqual([]);
    expect(fs.readdirSync(path.join(cache, 'tools', `hello-${HELLO.version}`, 'bin'))).toEqual([]);
  });
});
