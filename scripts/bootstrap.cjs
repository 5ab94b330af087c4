#!/usr/bin/env node
// Entry point of `npm start` and `npm test` on a fresh clone: it may run before node_modules exists,
// so it uses Node built-ins only, installs the locked dependencies when they are missing or stale,
// then hands over to the TypeScript scripts.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
// Node 20 is this project's floor; the AWS SDK's notice about its own future floor is noise on every start.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 20 || (major === 20 && minor < 19)) {
  console.error(`slipway: Node.js >= 20.19 is required (found ${process.versions.node}).`);
  process.exit(1);
}

function run(cmd, args, opts = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function ensureNodeModules() {
  const lock = path.join(root, 'package-lock.json');
  const stamp = path.join(root, 'node_modules', '.slipway-lock-sha256');
  const want = createHash('sha256').update(fs.readFileSync(lock)).digest('hex');
  const have = fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8').trim() : '';
  if (want === have) return;
  // `npm ci`: exactly what the lock records (it holds every platform's optional binaries, so no platform rewrites
  // it), and a clone stays clean.
  console.log('slipway: installing Node dependencies (npm ci)…');
  const status = run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error']);
  if (status !== 0) {
    console.error('slipway: `npm ci` failed; see the output above.');
    process.exit(status);
  }
  fs.writeFileSync(stamp, want + '\n');
}

/**
 * Runs the last step as our child and exits with its status. A signal sent to us alone (npm forwards SIGINT and
 * SIGTERM to its script; a process manager signals the top process) is passed on, and we stay until the child
 * has stopped what it started: dying first would orphan it mid-cleanup.
 */
function handOver(cmd, args) {
  const child = spawn(cmd, args, { cwd: root, stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.once('error', (err) => {
    console.error(`slipway: cannot run ${cmd}: ${err.message}`);
    process.exit(1);
  });
  child.once('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
}

/** Every file the console's build reads, hashed: the build is made again only when one of them changed. */
function consoleSources() {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'dist') walk(p);
      } else {
        hash.update(path.relative(root, p)).update('\0').update(fs.readFileSync(p));
      }
    }
  };
  walk(path.join(root, 'web'));
  hash.update(fs.readFileSync(path.join(root, 'package-lock.json')));
  return hash.digest('hex');
}

/** The web console the api serves at / (web/ built by Vite into web/dist), made when missing or stale. */
function ensureConsole() {
  const stamp = path.join(root, 'web', 'dist', '.slipway-source-sha256');
  const want = consoleSources();
  const have = fs.existsSync(stamp) ? fs.readFileSync(stamp, 'utf8').trim() : '';
  if (want === have) return;
  console.log('slipway: building the web console (vite build web)…');
  const status = run(process.execPath, [
    path.join(root, 'node_modules', 'vite', 'bin', 'vite.js'),
    'build',
    'web',
    '--logLevel',
    'warn',
  ]);
  if (status !== 0) {
    console.error('slipway: the web console did not build; see the output above.');
    process.exit(status);
  }
  fs.writeFileSync(stamp, want + '\n');
}

ensureNodeModules();
const command = process.argv[2];
const rest = process.argv.slice(3);
if (command === 'start') {
  ensureConsole();
  handOver(process.execPath, ['--import', 'tsx', 'scripts/start.ts', ...rest]);
} else if (command === 'test') {
  // Before the checks: the browser tests drive the build the api serves.
  ensureConsole();
  for (const step of [
    ['run', 'typecheck'],
    ['run', 'lint'],
  ]) {
    const status = run('npm', ['--silent', ...step]);
    if (status !== 0) process.exit(status);
  }
  process.exit(run(process.execPath, [path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...rest]));
} else {
  console.error('usage: node scripts/bootstrap.cjs start|test');
  process.exit(2);
}
