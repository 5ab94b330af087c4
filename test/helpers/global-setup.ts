import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { type Stack, startStack } from '@scripts/stack';
import { ensureDebianPackages } from '@scripts/stack/debian';
import { ensureTestServer } from '@scripts/stack/test-server';
import { createDockerClient } from '@shared/engine/docker-client';

import { buildBaseImages, buildDatabaseImages } from './base-images';

declare global {
  var __slipwayStack: { stack: Stack; dataDir: string } | undefined;
}

/**
 * Starts the real services the suite needs on free ports with throwaway data, never touching a
 * running `npm start` or its .data/. Variables already set (MONGODB_URL, …) point at existing servers instead.
 */
export default async function globalSetup(): Promise<void> {
  await ensureDebianPackages(
    ['busybox-static', 'docker-registry', 'chromium'],
    'the test images, the local registry and the browser tests of the web console',
    (line) => console.log(`[debian] ${line}`),
  );
  // Fetched here, not in a test, so a first run's download never counts against a test's timeout.
  process.env.SLIPWAY_TEMPORAL_TEST_SERVER = await ensureTestServer();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-test-'));
  const stack = await startStack({ dataDir, ports: 'free', headless: true });
  Object.assign(process.env, stack.env);
  // Tests that reach under a service (FerretDB's SQLite files) find its data here.
  process.env.SLIPWAY_TEST_DATA_DIR = dataDir;
  // Built once here: two test files would otherwise build the same bases at once, inside their own timeouts.
  // The first run on a machine debootstraps Debian and installs Node and Python: several minutes, said as it goes.
  const say = (line: string) => {
    if (/^(debootstrap --|importing|building|waiting)/.test(line)) console.log(`[base images] ${line}`);
  };
  const bases = await buildBaseImages(createDockerClient(process.env.DOCKER_HOST), say);
  // The database engines' images, on the same Debian base: under a minute each once it is there.
  const databases = await buildDatabaseImages(createDockerClient(process.env.DOCKER_HOST), say);
  process.env.DATABASE_IMAGE_POSTGRESQL = databases.postgresql;
  process.env.DATABASE_IMAGE_MARIADB = databases.mariadb;
  process.env.DATABASE_IMAGE_REDIS = databases.redis;
  process.env.BUILD_BASE_IMAGE_NODE = bases.node;
  process.env.BUILD_BASE_IMAGE_STATIC = bases.static;
  process.env.BUILD_BASE_IMAGE_PYTHON = bases.python;
  process.env.SECRETS_KEY ??= randomBytes(32).toString('base64');
  globalThis.__slipwayStack = { stack, dataDir };
  const stop = () => void stack.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
