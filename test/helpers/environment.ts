import { TestEnvironment } from 'jest-environment-node';
import { Agent, setGlobalDispatcher } from 'undici';

import { localhostLookup } from './edge';

/**
 * Jest's node environment, where `fetch` resolves *.localhost to loopback as a browser does: deployments' `url` is
 * their stable address on the edge router, `http://<name>-<id>.localhost:<port>`, and glibc here does not resolve
 * such names (see ./edge.ts). Set here, in the worker's own realm, because that is where Node's fetch looks for its
 * dispatcher (a test file's globals are a sandbox). One connection per request: the router closes kept connections
 * at every config change of any test's deployment.
 */
export default class LocalhostEnvironment extends TestEnvironment {
  constructor(...args: ConstructorParameters<typeof TestEnvironment>) {
    super(...args);
    setGlobalDispatcher(new Agent({ pipelining: 0, connect: { lookup: localhostLookup } }));
  }
}
