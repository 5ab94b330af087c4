// First-run provisioning time of the locally built tools, built as `npm start` builds them (ensureTool, its slots
// and time limit), at each build concurrency asked for: every round gets a throwaway tool cache and an empty Go
// build cache, so each figure includes the full compile, as on a fresh machine.
//
//   node --import tsx bench/provision.ts [--tools temporal,ferretdb,minio] [--concurrency 1,2] [--cold-modules]
//
// The Go module cache (downloads) stays the user's own unless --cold-modules: downloads measure the network,
// compiles measure the cores, and the question here is how many compiles 2 cores should run at once.
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { ensureTool, type ToolName, TOOLS } from '@scripts/stack/tools';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main() {
  const tools = (arg('tools') ?? Object.keys(TOOLS).join(',')).split(',') as ToolName[];
  const levels = (arg('concurrency') ?? '1,2').split(',').map(Number);
  const coldModules = process.argv.includes('--cold-modules');
  console.log(`tools: ${tools.join(', ')}; ${os.cpus().length} cores; module cache ${coldModules ? 'empty' : 'warm'}`);
  console.log('builds at once   wall (s)   compile CPU (s)   cached lookup (ms)   each done at (s)');
  for (const level of levels) {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bench-provision-'));
    process.env.SLIPWAY_CACHE_DIR = path.join(root, 'cache');
    process.env.GOCACHE = path.join(root, 'gocache');
    if (coldModules) process.env.GOMODCACHE = path.join(root, 'gomodcache');
    process.env.SLIPWAY_TOOL_BUILDS_AT_ONCE = String(level);
    const cpu0 = await childrenCpu();
    const t0 = performance.now();
    const each = await Promise.all(
      tools.map(async (name) => {
        await ensureTool(name);
        return `${name} ${((performance.now() - t0) / 1000).toFixed(0)}`;
      }),
    );
    const wall = (performance.now() - t0) / 1000;
    const cpu = (await childrenCpu()) - cpu0;
    const t1 = performance.now();
    await Promise.all(tools.map((name) => ensureTool(name)));
    const cached = performance.now() - t1;
    console.log(
      `${String(level).padStart(14)} ${wall.toFixed(1).padStart(10)} ${cpu.toFixed(1).padStart(17)} ${cached.toFixed(1).padStart(20)}   ${each.join(', ')}`,
    );
    // The Go caches are read-only by design; make them writable so the throwaway directory can go.
    await promisify(execFile)('chmod', ['-R', 'u+w', root]);
    await fs.rm(root, { recursive: true, force: true }).catch(() => console.log(`left ${root} behind`));
  }
}

/** User + system seconds of every reaped child of this process (go and its compilers), from /proc. */
async function childrenCpu(): Promise<number> {
  const stat = await fs.readFile('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of stat (cutime, cstime) are the 14th and 15th after the command name, in clock ticks.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

void main();
