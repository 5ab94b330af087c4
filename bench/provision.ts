// Cold first-run provisioning time of each locally built tool: a throwaway tool cache and empty Go build and
// module caches, so every figure includes the module download and the full compile, as on a fresh machine.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ensureTool, type ToolName, TOOLS } from '../scripts/stack/tools';

async function main() {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bench-provision-'));
  process.env.SLIPWAY_CACHE_DIR = path.join(root, 'cache');
  process.env.GOCACHE = path.join(root, 'gocache');
  process.env.GOMODCACHE = path.join(root, 'gomodcache');
  await fs.mkdir(process.env.SLIPWAY_CACHE_DIR, { recursive: true });
  console.log('tool      version                                   cold build (s)   cached lookup (ms)');
  for (const name of Object.keys(TOOLS) as ToolName[]) {
    const t0 = performance.now();
    await ensureTool(name);
    const cold = (performance.now() - t0) / 1000;
    const t1 = performance.now();
    await ensureTool(name);
    const cached = performance.now() - t1;
    console.log(
      `${name.padEnd(9)} ${TOOLS[name].version.padEnd(41)} ${cold.toFixed(1).padStart(14)} ${cached.toFixed(1).padStart(20)}`,
    );
  }
  // The Go module cache is read-only by design; make it writable so the throwaway directory can go.
  await fs.chmod(root, 0o755);
  await fs.rm(root, { recursive: true, force: true }).catch(() => console.log(`left ${root} behind`));
}

void main();
