import { PassThrough, type Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type Docker from 'dockerode';

/**
 * Tools run inside a container through the engine's exec, never through a shell: the command is an argv array, and
 * secrets travel in the exec's environment, not in its arguments (which `ps` and the engine's logs show).
 */

export interface ExecCommand {
  /** What the error names the tool as (`pg_dump`, `mariadb-dump`…); the first argument when absent. */
  tool?: string;
  cmd: string[];
  env?: Record<string, string>;
  user?: string;
}

/** Lines of a failed tool's stderr an error carries: enough for its own message, never a whole log. */
const STDERR_TAIL_LINES = 8;
const STDERR_KEEP_BYTES = 16 * 1024;

/** A tool in a container that exited non-zero (or could not be run): its name, exit code and last lines of stderr. */
export class EngineToolError extends Error {
  override name = 'EngineToolError';
  constructor(
    readonly tool: string,
    readonly exitCode: number | null,
    readonly stderrTail: string,
  ) {
    super(
      `${tool} failed${exitCode === null ? '' : ` with exit code ${exitCode}`}${stderrTail ? `: ${stderrTail}` : ''}`,
    );
  }
}

/** Keeps the last bytes of a stream (a tool's stderr) and says its last lines. */
class Tail {
  private text = '';
  add(chunk: Buffer): void {
    this.text = (this.text + chunk.toString('utf8')).slice(-STDERR_KEEP_BYTES);
  }
  lines(): string {
    return this.text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(-STDERR_TAIL_LINES)
      .join(' | ');
  }
}

/**
 * Splits the engine's multiplexed exec stream (an 8-byte header per frame: stream 1 stdout, 2 stderr, then the
 * length) into stdout, pushed on with backpressure, and stderr, kept as a tail. dockerode's own demuxer writes
 * without waiting for the reader, which would hold a whole dump in memory behind a slow upload.
 */
class Demux extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  constructor(
    private readonly stderr: Tail,
    private readonly onFlush: (cb: TransformCallback) => void,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    while (this.pending.length >= 8) {
      const size = this.pending.readUInt32BE(4);
      if (this.pending.length < 8 + size) break;
      const payload = this.pending.subarray(8, 8 + size);
      if (this.pending[0] === 2) this.stderr.add(payload);
      else this.push(payload);
      this.pending = this.pending.subarray(8 + size);
    }
    cb();
  }
  override _flush(cb: TransformCallback): void {
    this.onFlush(cb);
  }
}

async function exitCodeOf(exec: Docker.Exec): Promise<number | null> {
  // The stream can end a moment before the engine records the exit.
  for (let i = 0; i < 50; i++) {
    const info = await exec.inspect();
    if (!info.Running) return info.ExitCode;
    await new Promise((r) => setTimeout(r, 20 * Math.min(i + 1, 10)));
  }
  return null;
}

async function startExec(docker: Docker, containerId: string, c: ExecCommand, stdin: boolean) {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: c.cmd,
    Env: Object.entries(c.env ?? {}).map(([k, v]) => `${k}=${v}`),
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: stdin,
    Tty: false,
    ...(c.user ? { User: c.user } : {}),
  });
  const stream = (await exec.start({ hijack: true, stdin })) as NodeJS.ReadWriteStream & Readable;
  return { exec, stream };
}

/**
 * Runs the tool and streams its stdout. The stream ends only once the tool exited 0; otherwise it is destroyed with
 * an EngineToolError, so a reader never takes half a dump for a whole one.
 */
export async function execStream(docker: Docker, containerId: string, c: ExecCommand): Promise<Readable> {
  const tool = c.tool ?? c.cmd[0]!;
  const { exec, stream } = await startExec(docker, containerId, c, false);
  const stderr = new Tail();
  const demux = new Demux(stderr, (cb) => {
    exitCodeOf(exec).then(
      (code) => cb(code === 0 ? null : new EngineToolError(tool, code, stderr.lines())),
      (err: unknown) => cb(err as Error),
    );
  });
  const out = new PassThrough();
  pipeline(stream, demux, out).catch((err: unknown) => {
    out.destroy(err instanceof Error ? err : new Error(String(err)));
  });
  return out;
}

/**
 * Runs the tool to its end and returns its stdout (small outputs only: a readiness answer, a file's last bytes).
 * With `stdin`, that stream is fed to the tool and closed after it. A non-zero exit throws an EngineToolError.
 */
export async function execRun(
  docker: Docker,
  containerId: string,
  c: ExecCommand,
  stdin?: Readable,
): Promise<{ stdout: string }> {
  const tool = c.tool ?? c.cmd[0]!;
  const { exec, stream } = await startExec(docker, containerId, c, stdin !== undefined);
  const stderr = new Tail();
  let stdout = '';
  const collect = new Demux(stderr, (cb) => cb());
  collect.on('data', (chunk: Buffer) => {
    if (stdout.length < 64 * 1024) stdout += chunk.toString('utf8');
  });
  const reading = pipeline(stream, collect);
  if (stdin) {
    // Ending our side of the connection is the tool's end of input; the engine keeps its output flowing back.
    const feeding = pipeline(stdin, stream as unknown as NodeJS.WritableStream, { end: true });
    try {
      await feeding;
    } catch (err) {
      stream.destroy?.();
      throw new EngineToolError(tool, null, `its input could not be sent: ${(err as Error).message}`);
    }
  }
  await reading;
  const code = await exitCodeOf(exec);
  if (code !== 0) throw new EngineToolError(tool, code, stderr.lines());
  return { stdout };
}
