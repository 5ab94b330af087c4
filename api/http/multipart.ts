import fs from 'node:fs';
import path from 'node:path';

import type { Request, RequestHandler, Response } from 'express';
import multer from 'multer';

import { AppError } from '@shared/errors';

/** What a caller is told for each way multer refuses a body: our words, never the library's code or text. */
const REFUSALS: Partial<Record<multer.ErrorCode, string>> = {
  LIMIT_UNEXPECTED_FILE: 'Send exactly one multipart part, a file named "archive".',
  LIMIT_FIELD_COUNT: 'Send exactly one multipart part, a file named "archive".',
  LIMIT_FILE_COUNT: 'Send exactly one multipart part, a file named "archive".',
  LIMIT_PART_COUNT: 'Send exactly one multipart part, a file named "archive".',
};

/**
 * The multipart parser of POST /uploads/zip: one file part, `archive`, written to a directory of its own under
 * `tmpDir`. That directory is removed when the request ends, whatever happened — a refused, cut-off or failed
 * upload leaves nothing on disk (multer alone cannot promise that for a body we stop reading half-way).
 */
export function multipartArchive(opts: { maxBytes: number; tmpDir: string }): RequestHandler {
  const { maxBytes } = opts;
  fs.mkdirSync(opts.tmpDir, { recursive: true, mode: 0o700 });
  const tooLarge = () =>
    new AppError('INVALID_REQUEST', `The archive is larger than the ${maxBytes}-byte limit.`, { maxBytes });
  // Room for the multipart framing around the file, so a file just under the cap is never refused for it.
  const bodyCap = maxBytes + 64 * 1024;
  /**
   * Answers as soon as a body passes the cap, declared or counted, and closes the connection: the rest is never
   * read (multer alone would drain the request to its end before answering).
   */
  const refuseOversize = (req: Request, res: Response) => {
    res.setHeader('Connection', 'close');
    req.unpipe();
    req.pause();
    res.once('finish', () => setTimeout(() => req.socket.destroy(), 1000).unref());
  };

  return (req, res, next) => {
    let answered = false;
    let dir: string | undefined;
    const removeDir = () => {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    };
    // Removed before any answer goes out (so a caller never sees a refusal while the file still exists) and again
    // when the response closes (a success's file, once the handler is done with it).
    res.once('close', removeDir);
    const answer = (err?: unknown) => {
      if (answered) return;
      answered = true;
      if (err) removeDir();
      next(err);
    };
    if (Number(req.headers['content-length']) > bodyCap) {
      refuseOversize(req, res);
      return answer(tooLarge());
    }
    try {
      dir = fs.mkdtempSync(path.join(opts.tmpDir, 'upload-'));
    } catch (err) {
      return answer(err);
    }
    const upload = multer({
      storage: multer.diskStorage({ destination: dir }),
      limits: { fileSize: maxBytes, files: 1, fields: 0 },
    }).single('archive');

    let seen = 0;
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= bodyCap || answered) return;
      req.off('data', count);
      refuseOversize(req, res);
      answer(tooLarge());
    };
    upload(req, res, (err: unknown) => {
      req.off('data', count);
      if (!err) return answer();
      if (err instanceof multer.MulterError && err.code === 'LIMIT_FILE_SIZE') return answer(tooLarge());
      // A failure of our own disk (ENOSPC, EACCES) is a server error, not the caller's.
      if ((err as NodeJS.ErrnoException).syscall) return answer(err);
      // The raw reason (busboy's parse error, a disk error) is for the operator; the caller gets what to do.
      req.log?.info({ err }, 'multipart body refused');
      const message =
        (err instanceof multer.MulterError && REFUSALS[err.code]) ||
        'The multipart body could not be read: it is malformed or was cut short. Send multipart/form-data with one file part named "archive".';
      answer(new AppError('INVALID_REQUEST', message));
    });
    // After multer has piped the request: both see every chunk.
    req.on('data', count);
  };
}
