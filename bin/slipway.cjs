#!/usr/bin/env node
// The `slipway` command: runs the TypeScript CLI through tsx, from any working directory.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { pathToFileURL } = require('node:url');

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// Node resolves this file's symlinks (npm link, a bin directory) before running it, so this is the checkout.
const root = path.join(__dirname, '..');
const cli = path.join(root, 'cli', 'index.ts');
// A bare `--import tsx` is looked up from the working directory, where there is usually no node_modules: the
// loader is this package's own, passed as a file URL.
const tsx = pathToFileURL(require.resolve('tsx', { paths: [root] })).href;
// tsx finds tsconfig.json (and the import aliases in it) from the working directory, which is the user's folder.
process.env.TSX_TSCONFIG_PATH ??= path.join(root, 'tsconfig.json');
// Ctrl-C reaches the CLI itself (the terminal signals the whole foreground group), which says what it stopped and
// restores the terminal; this wrapper waits for it instead of dying first and handing the prompt back mid-output.
process.on('SIGINT', () => {});
const result = spawnSync(process.execPath, ['--import', tsx, cli, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
