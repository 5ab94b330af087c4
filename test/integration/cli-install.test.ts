import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { type Harness, startHarness } from '../helpers/harness';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '..', '..', 'bin', 'slipway.cjs');

/**
 * The `slipway` command as it is installed: started from a folder that is not the checkout (no node_modules
 * anywhere above it), by its path or through a symlink in a bin directory on the PATH, as `npm link` makes one.
 */
describe('the installed slipway command works from any directory', () => {
  let h: Harness;
  let elsewhere: string;
  let binDir: string;
  /** PATH with the linked command first, and node for its `#!/usr/bin/env node`. */
  let pathWithLink: string;

  beforeAll(async () => {
    h = await startHarness('cli-install', {}, { worker: false });
    elsewhere = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-elsewhere-'));
    binDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bin-'));
    await fs.symlink(BIN, path.join(binDir, 'slipway'));
    pathWithLink = [binDir, path.dirname(process.execPath), process.env.PATH].join(path.delimiter);
  });
  afterAll(async () => {
    await h?.stop();
    for (const dir of [elsewhere, binDir]) if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('answers --help by its absolute path and through a linked bin, with an empty folder as working directory', async () => {
    const byPath = await run(process.execPath, [BIN, '--help'], { cwd: elsewhere });
    expect(byPath.stdout).toContain('Usage: slipway');
    expect(byPath.stdout).toContain('deploy [options]');

    const linked = await run('slipway', ['--help'], { cwd: elsewhere, env: { ...process.env, PATH: pathWithLink } });
    expect(linked.stdout).toContain('Usage: slipway');
    expect(linked.stderr).toBe('');
  });

  it('serves MCP over stdio when an MCP client starts `slipway mcp` in another folder', async () => {
    const { token } = await h.newOrg();
    const client = new Client({ name: 'cli-install-test', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: 'slipway',
      args: ['mcp'],
      cwd: elsewhere,
      env: {
        ...(process.env as Record<string, string>),
        PATH: pathWithLink,
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        MONGODB_DB: h.config.MONGODB_DB,
        TEMPORAL_TASK_QUEUE: h.taskQueue,
        REDIS_KEY_PREFIX: h.config.REDIS_KEY_PREFIX,
        SLIPWAY_TOKEN: token,
      },
      stderr: 'inherit',
    });
    try {
      await client.connect(transport);
      expect(client.getServerVersion()?.name).toBeTruthy();
      const me = await client.callTool({ name: 'whoami', arguments: {} });
      expect(me.isError).toBeFalsy();
      expect(me.structuredContent).toMatchObject({ org: { plan: 'pro' }, user: { role: 'owner' } });
    } finally {
      await client.close();
    }
  });
});
