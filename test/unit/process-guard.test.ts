import { spawn } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');

/**
 * A process with the guard installed, where a library emits 'error' with no listener (as docker-modem's redirect
 * request did) and a promise rejects unhandled: both are logged and the process carries on with its next task.
 */
const script = `
const { EventEmitter } = require('node:events');
const { createLogger } = require('./shared/logger');
const { logUnexpectedErrors } = require('./shared/process-guard');
logUnexpectedErrors(createLogger('probe', 'error'), 'probe');
setImmediate(() => new EventEmitter().emit('error', new Error('getaddrinfo ENOTFOUND etc')));
setImmediate(() => void Promise.reject(new Error('nobody awaited this')));
setTimeout(() => { console.log('still serving'); process.exit(0); }, 200);
`;

describe('process guard', () => {
  it('logs an error that escaped every handler and keeps the process running', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { cwd: root });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(out).toContain('still serving');
    expect(out).toMatch(/an error escaped every handler.*ENOTFOUND etc|ENOTFOUND etc.*an error escaped every handler/s);
    expect(out).toMatch(/a promise rejection nobody handled/);
  });
});
