import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { ifAbsent, ignore } from '@shared/ignore';

import { compareVersions, GoCommandError, goDirective, goVersion, oneLine, runGo } from './go';
import { cacheDir } from './paths';
import { StackError } from './stack-error';

/** A server we build from its Go module source, pinned, because no machine here reaches a container registry. */
export interface GoTool {
  module: string;
  version: string;
  /** Package to build, relative to the module root. */
  pkg: string;
  /** Variable that points at an existing server instead, named in the failure line. */
  insteadVar: string;
  /** Oldest Go that builds it, when stricter than the module's own `go` directive. */
  minGo?: string;
  /** Fix-ups the module's own build tooling would have made (go install alone cannot). */
  prepare?: (srcDir: string, version: string) => Promise<void>;
}

const execFileAsync = promisify(execFile);

export const TOOLS = {
  // Later CLI tags carry a `replace` directive; v1.5.1 builds from the module as published.
  temporal: {
    module: 'github.com/temporalio/cli',
    version: 'v1.5.1',
    pkg: './cmd/temporal',
    insteadVar: 'TEMPORAL_ADDRESS',
  },
  ferretdb: {
    module: 'github.com/FerretDB/FerretDB',
    version: 'v1.24.2',
    pkg: './cmd/ferretdb',
    insteadVar: 'MONGODB_URL',
    // FerretDB panics at start without the version file its `task gen-version` writes.
    prepare: (srcDir, version) => fs.writeFile(path.join(srcDir, 'build', 'version', 'version.txt'), `${version}\n`),
  },
  // MinIO publishes no semver tags to the module proxy; this is its newest pseudo-version there.
  minio: {
    module: 'github.com/minio/minio',
    version: 'v0.0.0-20260212201848-7aac2a2c5b7c',
    pkg: '.',
    insteadVar: 'S3_ENDPOINT',
  },
  // MinIO's client: its admin commands make and remove the access keys that open one bucket only (a bucket's
  // credentials). No semver tags on the module proxy either; this is its newest pseudo-version there.
  mc: {
    module: 'github.com/minio/mc',
    version: 'v0.0.0-20250313080218-cf909e1063a9',
    pkg: '.',
    insteadVar: 'MC_BINARY',
  },
  // The edge router (docs/architecture.md, "Edge router"); v2.11.9's go.mod asks for Go 1.26.0. Only its standard
  // modules are needed.
  caddy: {
    module: 'github.com/caddyserver/caddy/v2',
    version: 'v2.11.9',
    pkg: './cmd/caddy',
    insteadVar: 'EDGE_ADMIN_URL',
  },
} satisfies Record<string, GoTool>;

export type ToolName = keyof typeof TOOLS;

/**
 * How many tools compile at once. Two: on 2 cores, cold FerretDB + Temporal CLI took 1308 s two at a time
 * against 1979 s one at a time, for 4% more CPU (the dependencies both compile); one `go build` leaves cores idle
 * in its serial stretches (linking, long dependency chains), which a second build fills (bench/provision.ts).
 * More than two would only split the same cores further and add another ~1.8 GiB linker at peak.
 */
const buildsAtOnce = () => Math.max(1, Number(process.env.SLIPWAY_TOOL_BUILDS_AT_ONCE) || 2);
/**
 * A cold Temporal CLI build took 21 min on 2 cores shared with a busy test suite (bench/provision.ts); past an
 * hour something is wrong (a hung proxy, a thrashing machine) and waiting longer would only hide it.
 */
const BUILD_TIMEOUT_MS = (Number(process.env.SLIPWAY_TOOL_BUILD_TIMEOUT_S) || 3600) * 1000;
const DOWNLOAD_TIMEOUT_MS = 600_000;

export function toolBinary(name: string, tool: GoTool = TOOLS[name as ToolName]): string {
  return path.join(cacheDir(), 'tools', `${name}-${tool.version}`, 'bin', name);
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(() => true, ifAbsent(false));
}

let running = 0;
const waiting: (() => void)[] = [];

/** Holds one of buildsAtOnce() slots while `fn` runs; the others wait their turn in order. */
async function inSlot<T>(fn: () => Promise<T>, onWait: () => void): Promise<T> {
  if (running >= buildsAtOnce()) {
    onWait();
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    return await fn();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

export interface EnsureOptions {
  signal?: AbortSignal;
  progress?: (line: string) => void;
  timeoutMs?: number;
}

/** Returns the path of a pinned tool's binary, building it into the cache first when absent. */
export function ensureTool(name: ToolName, opts: EnsureOptions = {}): Promise<{ binary: string; built: boolean }> {
  return ensureGoTool(name, TOOLS[name], opts);
}

/**
 * Builds `tool` into `<cache>/tools/<name>-<version>/bin/<name>` unless it is there. Builds write to a unique
 * temporary name and rename into place, so two concurrent runs never see half a binary; the scratch copy of the
 * source and the temporary binary are removed however the build ends (failure, time limit, Ctrl-C).
 */
export async function ensureGoTool(
  name: string,
  tool: GoTool,
  opts: EnsureOptions = {},
): Promise<{ binary: string; built: boolean }> {
  const binary = toolBinary(name, tool);
  if (await exists(binary)) return { binary, built: false };
  try {
    await inSlot(
      () => build(name, tool, binary, opts),
      () => opts.progress?.(`waiting for another tool build to finish (${buildsAtOnce()} at a time)`),
    );
    return { binary, built: true };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (opts.signal?.aborted)
      throw new StackError(`building ${name} ${tool.version} stopped: start-up was interrupted`);
    throw new StackError(
      `cannot build ${name} ${tool.version}: ${why}; fix that, or set ${tool.insteadVar} to use an existing server`,
    );
  }
}

async function build(name: string, tool: GoTool, binary: string, opts: EnsureOptions): Promise<void> {
  // Another run may have finished it while this one waited for a slot.
  if (await exists(binary)) return;
  const have = await goVersion();
  const scratchRoot = path.join(cacheDir(), 'build');
  await mkdirp(scratchRoot, 'the tool cache');
  opts.progress?.(`downloading ${tool.module}@${tool.version}`);
  const info = await download(tool, scratchRoot, opts.signal);
  const need = [goDirective(await fs.readFile(info.GoMod, 'utf8')), tool.minGo]
    .filter((v): v is string => !!v)
    .reduce((a, b) => (compareVersions(a, b) >= 0 ? a : b), '0');
  if (compareVersions(have, need) < 0) {
    throw new StackError(`it needs Go ${need} or newer and \`go\` on PATH is ${have}; install Go ${need}+`);
  }
  const work = await fs.mkdtemp(path.join(scratchRoot, `${name}-`));
  const tmp = `${binary}.${process.pid}.${path.basename(work)}.tmp`;
  try {
    await fs.cp(info.Dir, work, { recursive: true });
    // The module cache is read-only by design; the copy must be writable for prepare and for its removal.
    await chmodWritable(work);
    await tool.prepare?.(work, tool.version);
    await mkdirp(path.dirname(binary), 'the tool cache');
    opts.progress?.(`compiling ${name} (first run only, a few minutes)`);
    await runGo(['build', '-trimpath', '-o', tmp, tool.pkg], {
      cwd: work,
      timeoutMs: opts.timeoutMs ?? BUILD_TIMEOUT_MS,
      signal: opts.signal,
    });
    await fs.rename(tmp, binary);
  } finally {
    await chmodWritable(work).catch(
      ignore('the copy was never made; one left read-only makes the rm below fail loudly'),
    );
    await fs.rm(work, { recursive: true, force: true });
    await fs.rm(tmp, { force: true });
  }
}

async function mkdirp(dir: string, what: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true }).catch((err: NodeJS.ErrnoException) => {
    throw new StackError(`cannot create ${what} at ${dir} (${err.code ?? err.message}); set SLIPWAY_CACHE_DIR`);
  });
}

/**
 * `go mod download -json` outside any module (the scratch root has no go.mod). On failure Go prints the reason
 * as JSON (`Error`) on stdout and nothing on stderr, so the reason is read from there.
 */
async function download(
  tool: GoTool,
  cwd: string,
  signal: AbortSignal | undefined,
): Promise<{ Dir: string; GoMod: string }> {
  const spec = `${tool.module}@${tool.version}`;
  let stdout: string;
  try {
    stdout = await runGo(['mod', 'download', '-json', spec], { cwd, timeoutMs: DOWNLOAD_TIMEOUT_MS, signal });
  } catch (err) {
    const reported = err instanceof GoCommandError ? parseDownload(err.stdout)?.Error : undefined;
    if (reported) throw new StackError(`go mod download ${spec} failed: ${oneLine(reported)}`);
    throw err;
  }
  const info = parseDownload(stdout);
  if (!info?.Dir || !info.GoMod) {
    throw new StackError(`go mod download ${spec} failed: ${oneLine(info?.Error ?? 'it printed no module directory')}`);
  }
  return { Dir: info.Dir, GoMod: info.GoMod };
}

function parseDownload(stdout: string): { Dir?: string; GoMod?: string; Error?: string } | undefined {
  try {
    return JSON.parse(stdout) as { Dir?: string; GoMod?: string; Error?: string };
  } catch {
    return undefined;
  }
}

async function chmodWritable(dir: string): Promise<void> {
  await execFileAsync('chmod', ['-R', 'u+w', dir]);
}
