import fs from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  const started = globalThis.__slipwayStack;
  if (!started) return;
  await started.stack.stop();
  await fs.rm(started.dataDir, { recursive: true, force: true });
}
