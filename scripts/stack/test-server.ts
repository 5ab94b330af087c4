import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { ifAbsent } from '@shared/ignore';

import { ensureDebianPackages } from './debian';
import { cacheDir } from './paths';
import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

/**
 * Temporal's time-skipping test server, for tests of long timers (the webhook schedule spans a day).
 * The SDK would download a native build from GitHub, which this machine cannot reach; the same server is
 * published on Maven Central as a Java artifact, so we fetch it with Maven and run it on the JVM.
 */
export const TEST_SERVER_VERSION = '1.38.0';

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.slipway</groupId><artifactId>temporal-test-server-launcher</artifactId><version>1</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>${TEST_SERVER_VERSION}</version>
    </dependency>
  </dependencies>
</project>
`;

// The SDK starts the executable as `<path> <port> --enable-time-skipping`, exactly TestServer's arguments.
const LAUNCHER = `#!/bin/sh
exec java -cp "$(dirname "$0")/../lib/*" io.temporal.testserver.TestServer "$@"
`;

/** Path of the launcher script, fetching the server's jars into the tool cache first when absent. */
export async function ensureTestServer(): Promise<string> {
  const dir = path.join(cacheDir(), 'tools', `temporal-test-server-${TEST_SERVER_VERSION}`);
  const launcher = path.join(dir, 'bin', 'temporal-test-server');
  if (await fs.access(launcher).then(() => true, ifAbsent(false))) return launcher;

  await ensureDebianPackages(['maven', 'default-jre-headless'], "Temporal's time-skipping test server");
  // Built beside the final directory and renamed into place: a concurrent run never sees half a server.
  const work = `${dir}.${process.pid}.tmp`;
  await fs.rm(work, { recursive: true, force: true });
  await fs.mkdir(path.join(work, 'bin'), { recursive: true });
  try {
    await fs.writeFile(path.join(work, 'pom.xml'), POM);
    await execFileAsync('mvn', ['-q', '-B', 'dependency:copy-dependencies', '-DoutputDirectory=lib'], {
      cwd: work,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: NodeJS.ErrnoException & { stdout?: string }) => {
      const why = (err.stdout || err.message).trim().split('\n').slice(-3).join(' | ');
      throw new StackError(`cannot fetch io.temporal:temporal-test-server:${TEST_SERVER_VERSION} with Maven: ${why}`);
    });
    await fs.writeFile(path.join(work, 'bin', 'temporal-test-server'), LAUNCHER, { mode: 0o755 });
    await fs.rename(work, dir).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    });
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  return launcher;
}
