// Bundles the workflow code with webpack and writes it to the file named by the first argument. worker/main.ts runs
// this as a process of its own: webpack and the compilation would otherwise stay in the worker's resident memory
// for as long as it runs (about 150 MB of a 380 MB worker here), for code it needs once, at start.
import fs from 'node:fs/promises';

import { bundleWorkflowCode } from '@temporalio/worker';

import { workflowBundlerOptions } from '@shared/aliases';

async function main() {
  const out = process.argv[2];
  if (!out) throw new Error('usage: worker/bundle.ts <output file>');
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    ...workflowBundlerOptions,
  });
  await fs.writeFile(out, code, { mode: 0o600 });
}

main().catch((err: unknown) => {
  console.error(`slipway worker: cannot bundle the workflow code: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
