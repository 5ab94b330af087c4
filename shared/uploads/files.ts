import yazl from 'yazl';

import { entryNameProblem } from '../build/extract';
import type { Config } from '../config';
import { AppError } from '../errors';

/**
 * A project given as files rather than as a zip (inline in an agent's call, or a builder checkpoint): it becomes an
 * upload like any other, zipped here, so the build, its limits and its isolation are the ones an uploaded zip meets.
 */
export interface ProjectFile {
  path: string;
  bytes: Buffer;
}

/**
 * What an inline call may carry at most. The api's JSON bodies stop at 1 MB, before a tool sees them: 512 KiB of
 * content stays under it even as base64 (4/3 larger), so a call past this cap is refused by it, naming the file.
 */
export const INLINE_FILE_LIMITS = { maxFiles: 500, maxBytes: 512 * 1024 } as const;

/** How to send a project past the inline caps; every refusal of size or count says it. */
const BIGGER = 'zip larger projects and upload them (POST /compat/uploads/zip), then deploy the uploadId';

/** One cap: its number and, for a refusal, what it is called. */
interface Cap {
  max: number;
  name: string;
}

export interface FileLimits {
  files: Cap;
  bytes: Cap;
  /** The zip itself, as an upload's archive is capped. */
  zipBytes: Cap;
}

/**
 * The caps a project given as files meets: those of an uploaded zip (its size, and the entries and bytes a build
 * extracts), and inline the smaller caps of a call's body. The smaller one of each pair is the one named.
 */
export function fileLimits(
  cfg: Pick<Config, 'BUILD_MAX_ENTRIES' | 'BUILD_MAX_UNCOMPRESSED_BYTES' | 'UPLOAD_MAX_BYTES'>,
  inline: boolean,
): FileLimits {
  const smaller = (build: Cap, own: Cap | undefined) => (own && own.max < build.max ? own : build);
  return {
    files: smaller(
      { max: cfg.BUILD_MAX_ENTRIES, name: 'a build extracts (BUILD_MAX_ENTRIES)' },
      inline ? { max: INLINE_FILE_LIMITS.maxFiles, name: `an inline deploy takes; ${BIGGER}` } : undefined,
    ),
    bytes: smaller(
      { max: cfg.BUILD_MAX_UNCOMPRESSED_BYTES, name: 'a build extracts (BUILD_MAX_UNCOMPRESSED_BYTES)' },
      inline ? { max: INLINE_FILE_LIMITS.maxBytes, name: `an inline deploy takes; ${BIGGER}` } : undefined,
    ),
    zipBytes: { max: cfg.UPLOAD_MAX_BYTES, name: 'an upload may be (UPLOAD_MAX_BYTES)' },
  };
}

/**
 * Why `path` cannot name a file of a project, or undefined: the rules of an archive's entries (extract.ts), and a
 * plain form, since a zip entry is its name as written and `a//b`, `./a` or `a/` would not be the file meant.
 */
export function filePathProblem(path: string): string | undefined {
  if (path === '') return 'is empty';
  const entry = entryNameProblem(path);
  if (entry) return entry;
  if (path.endsWith('/')) return 'ends with /, which names a directory; list the files inside it instead';
  if (path.split('/').some((s) => s === '' || s === '.')) return 'has an empty or . segment; write it as a/b';
  return undefined;
}

const refuse = (message: string, details: Record<string, unknown>) => new AppError('INVALID_REQUEST', message, details);

/**
 * Refuses files that could not be one project tree, naming the file and the rule or cap: a bad path, a path given
 * twice, a file that another file would need as a directory, more files or bytes than `limits` allow.
 */
export function checkProjectFiles(files: ProjectFile[], limits: FileLimits): void {
  if (files.length === 0) throw refuse('No files: give at least one.', {});
  if (files.length > limits.files.max)
    throw refuse(`${files.length} files are more than the ${limits.files.max} ${limits.files.name}.`, {
      files: files.length,
      limit: limits.files.max,
    });
  const seen = new Set<string>();
  let bytes = 0;
  for (const f of files) {
    const problem = filePathProblem(f.path);
    if (problem) throw refuse(`The path ${JSON.stringify(f.path)} ${problem}.`, { path: f.path });
    if (seen.has(f.path)) throw refuse(`The path ${JSON.stringify(f.path)} is given twice.`, { path: f.path });
    seen.add(f.path);
    bytes += f.bytes.length;
    if (bytes > limits.bytes.max)
      throw refuse(
        `With ${JSON.stringify(f.path)} (${f.bytes.length} bytes) the files hold more than the ${limits.bytes.max} bytes ${limits.bytes.name}.`,
        { path: f.path, bytes: f.bytes.length, limit: limits.bytes.max },
      );
  }
  for (const f of files) {
    const segments = f.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join('/');
      if (seen.has(dir))
        throw refuse(`${JSON.stringify(dir)} is a file, so ${JSON.stringify(f.path)} cannot be inside it.`, {
          path: f.path,
          file: dir,
        });
    }
  }
}

/** The files as one zip, in memory (the caps above keep it small), each entry named by its path. */
export function zipProjectFiles(files: ProjectFile[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  // A fixed time: the same files make the same archive, so its SHA-256 names the content.
  for (const f of files) zip.addBuffer(f.bytes, f.path, { mtime: new Date(0), mode: 0o100644 });
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Files as a call gives them (text, or base64 for bytes), decoded; a content that is not base64 names its path. */
export function decodeFiles(files: { path: string; content: string; encoding: 'utf8' | 'base64' }[]): ProjectFile[] {
  return files.map((f) => {
    if (f.encoding === 'base64' && !BASE64.test(f.content))
      throw refuse(
        `The content of ${JSON.stringify(f.path)} is not base64 (A-Z, a-z, 0-9, + and /, padded with =, no line breaks).`,
        { path: f.path },
      );
    return { path: f.path, bytes: Buffer.from(f.content, f.encoding) };
  });
}
