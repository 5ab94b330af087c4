#!/usr/bin/env node
// The `slipway` command: runs the TypeScript CLI through tsx, from any working directory.
'use strict';
const { spawnSync } = require('node:child_process');
const path = require('node:path');

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const cli = path.join(__dirname, '..', 'cli', 'index.ts');
// Ctrl-C reaches the CLI itself (the terminal signals the whole foreground group), which says what it stopped and
// restores the terminal; this wrapper waits for it instead of dying first and handing the prompt back mid-output.
process.on('SIGINT', () => {});
const result = spawnSync(process.execPath, ['--import', 'tsx', cli, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(result.status ?? 1);
