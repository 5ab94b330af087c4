import { PassThrough, Readable } from 'node:stream';
import { finished } from 'node:stream/promises';

import type Docker from 'dockerode';

export interface LogLine {
  timestamp: string;
  stream: 'stdout' | 'stderr' | 'build' | 'system';
  message: string;
}

/** Docker multiplexes stdout and stderr in one stream (our containers have no TTY); demux, then merge by time. */
export async function readContainerLogs(
  docker: Docker,
  containerId: string,
  tail: number,
  /** Epoch seconds: only lines written at or after it. */
  since?: number,
): Promise<LogLine[]> {
  const raw = (await docker.getContainer(containerId).logs({
    stdout: true,
    stderr: true,
    tail,
    timestamps: true,
    follow: false,
    ...(since ? { since } : {}),
  })) as Buffer;
  const text = { stdout: '', stderr: '' };
  const sink = (stream: keyof typeof text) => {
    const pass = new PassThrough();
    pass.on('data', (chunk: Buffer) => (text[stream] += chunk.toString('utf8')));
    return pass;
  };
  const source = Readable.from([raw]);
  docker.modem.demuxStream(source, sink('stdout'), sink('stderr'));
  await finished(source);
  await new Promise((r) => setImmediate(r)); // let the demuxed chunks drain into the sinks
  const lines: LogLine[] = [];
  for (const stream of ['stdout', 'stderr'] as const) {
    for (const line of text[stream].split('\n')) {
      if (!line) continue;
      const space = line.indexOf(' ');
      lines.push({ stream, timestamp: line.slice(0, space), message: line.slice(space + 1) });
    }
  }
  return lines.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}
