import { causeInLines, collapseRepeats } from '@shared/deployments/evidence';
import { hintFor } from '@shared/deployments/hints';
import { registryUnreachableMessage, unreachableReason, unreachableRegistryIn } from '@shared/images/pull-failure';

// A crash as Node prints it: the stack, then the error, then the Node version, on every start.
const NODE_CRASH = [
  'node:internal/modules/cjs/loader:1228',
  '  throw err;',
  '  ^',
  '',
  "Error: Cannot find module 'express'",
  'Require stack:',
  '- /app/server.js',
  '    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)',
  '    at Module._load (node:internal/modules/cjs/loader:1051:27)',
  '  code: ‘MODULE_NOT_FOUND’,',
  'Node.js v20.19.2',
];

describe('the evidence of a crash', () => {
  it('keeps one run of lines a crash-loop repeated on every restart', () => {
    const logged = ['starting', ...NODE_CRASH, ...NODE_CRASH, ...NODE_CRASH, ...NODE_CRASH];
    expect(collapseRepeats(logged)).toEqual(['starting', ...NODE_CRASH]);
  });

  it('keeps a run whose own lines repeat (retries, then the error) as it was, and a restart cut short after it', () => {
    const run = ['connecting to db', 'retrying', 'retrying', 'boom: no database'];
    expect(collapseRepeats([...run, ...run, ...run, 'connecting to db'])).toEqual([...run, 'connecting to db']);
  });

  it('changes nothing in lines that do not repeat', () => {
    const lines = ['a', 'b', 'a', 'c', 'b', 'a'];
    expect(collapseRepeats(lines)).toEqual(lines);
  });

  it.each([
    [["Error: Cannot find module 'express'"], { cause: 'missing_module', language: 'node', module: 'express' }],
    [
      ["Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@fastify/static' imported from /app/server.mjs"],
      { cause: 'missing_module', language: 'node', module: '@fastify/static' },
    ],
    [["Error: Cannot find module 'lodash/fp'"], { cause: 'missing_module', language: 'node', module: 'lodash' }],
    [["Error: Cannot find module '/app/server.js'"], { cause: 'missing_file', file: '/app/server.js' }],
    [
      [
        'Traceback (most recent call last):',
        '  File "/app/app.py", line 1',
        "ModuleNotFoundError: No module named 'yaml.cyaml'",
      ],
      { cause: 'missing_module', language: 'python', module: 'yaml' },
    ],
    [['listening on 3000', 'TypeError: x is not a function'], undefined],
  ])('reads the cause the lines name: %j', (lines, cause) => {
    expect(causeInLines(lines)).toEqual(cause);
  });

  it('words a missing module as a dependency to add, for each language', () => {
    expect(hintFor({ cause: 'missing_module', language: 'node', module: 'express' })).toMatch(
      /needs the package "express", which is not installed: add it to "dependencies" in package.json/,
    );
    expect(hintFor({ cause: 'missing_module', language: 'python', module: 'flask' })).toMatch(
      /module "flask", which is not installed: add the package that provides it to requirements\.txt/,
    );
  });
});

describe('a pull no registry answered', () => {
  it.each([
    [
      'Get "https://registry-1.docker.io/v2/": dial tcp: lookup registry-1.docker.io on 10.255.255.53:53: no such host',
      'its host name does not resolve',
    ],
    ['Get "http://127.0.0.1:1/v2/": dial tcp 127.0.0.1:1: connect: connection refused', 'it refused the connection'],
    [
      'Get "https://r.example/v2/": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)',
      'it did not answer in time',
    ],
    ['manifest for nginx:nope not found: manifest unknown: manifest unknown', undefined],
    ["pull access denied for nope, repository does not exist or may require 'docker login'", undefined],
  ])('tells an unreachable registry from one that answered: %s', (engineText, reason) => {
    expect(unreachableReason(engineText)).toBe(reason);
  });

  it('names the registry in the message, and the message is read back for the hint', () => {
    const message = registryUnreachableMessage(
      'docker.io/library/nginx:1',
      'docker.io',
      'its host name does not resolve',
    );
    expect(message).toMatch(/the registry docker\.io could not be reached \(its host name does not resolve\)/);
    expect(message).not.toMatch(/was not found|check the repository, tag or digest/i);
    expect(unreachableRegistryIn(message)).toBe('docker.io');
    expect(unreachableRegistryIn('image x:1 was not found: it is not on the engine')).toBeUndefined();
    expect(hintFor({ cause: 'registry_unreachable', registry: 'docker.io' })).toMatch(
      /registry docker\.io could not be reached/,
    );
  });
});
