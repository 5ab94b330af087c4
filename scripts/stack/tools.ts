import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { cacheDir } from './paths';
import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

/** A server we build from its Go module source, pinned, because no machine here reaches a container registry. */
interface GoTool {
  module: string;
  version: string;
  /** Package to build, relative to the module root. */
  pkg: string;
  /** Variable that points at an existing server instead, named in the failure line. */
  insteadVar: string;
  /** Fix-ups the module's own build tooling would have made (go install alone cannot). */
  prepare?: (srcDir: string, version: string) => Promise<void>;
}

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
} satisfies Record<string, GoTool>;

export type ToolName = keyof typeof TOOLS;

export function toolBinary(name: ToolName): string {
  const tool: GoTool = TOOLS[name];
  return path.join(cacheDir(), 'tools', `${name}-${tool.version}`, 'bin', name);
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

async function go(args: string[], cwd: string): Promise<string> {
  try {
    const { stdout } = await execFileAsync('go', args, {
      cwd,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
    });
    return stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new StackError('the Go toolchain (`go`) is not on PATH');
    throw new StackError(
      `go ${args.join(' ')} failed: ${(e.stderr ?? e.message).trim().split('\n').slice(-3).join(' | ')}`,
    );
  }
}

/**
 * Returns the path of the tool's binary, building it into the cache first when absent.
 * Builds write to a unique temporary name and rename into place, so two concurrent runs never see half a binary.
 */
export async function ensureTool(name: ToolName): Promise<{ binary: string; built: boolean }> {
  const tool: GoTool = TOOLS[name];
  const binary = toolBinary(name);
  if (await exists(binary)) return { binary, built: false };
  try {
    const info = JSON.parse(await go(['mod', 'download', '-json', `${tool.module}@${tool.version}`], cacheDir())) as {
      Dir?: string;
      Error?: string;
    };
    if (!info.Dir) throw new StackError(info.Error ?? `the module proxy did not serve ${tool.module}@${tool.version}`);
    const work = path.join(cacheDir(), 'build', `${name}-${randomUUID()}`);
    await fs.cp(info.Dir, work, { recursive: true });
    await execFileAsync('chmod', ['-R', 'u+w', work]);
    try {
      await tool.prepare?.(work, tool.version);
      await fs.mkdir(path.dirname(binary), { recursive: true });
      const tmp = `${binary}.${process.pid}.tmp`;
      await go(['build', '-trimpath', '-o', tmp, tool.pkg], work);
      await fs.rename(tmp, binary);
    } finally {
      await fs.rm(work, { recursive: true, force: true });
    }
    return { binary, built: true };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new StackError(
      `cannot build ${name} ${tool.version} (${why}); set ${tool.insteadVar} to use an existing server`,
    );
  }
}
