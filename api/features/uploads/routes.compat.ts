import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { AppError } from '@shared/errors';

import { principalOf } from '../../http/auth';
import { multipartArchive } from '../../http/multipart';
import { route, type RouteDef } from '../../http/routes';
import { UploadResult } from '../deployments/schemas.responses';
import type { UploadsContext } from './compose';

/** POST /compat/uploads/zip: the archive a source deploy names by uploadId. */
export function compatUploadRoutes(ctx: UploadsContext): RouteDef[] {
  const { can } = ctx;
  const uploadsLimit = ctx.limit.compatUploads;
  const multipart = multipartArchive({
    maxBytes: ctx.config.UPLOAD_MAX_BYTES,
    tmpDir: ctx.config.UPLOAD_TMP_DIR ?? path.join(os.tmpdir(), 'slipway-uploads'),
  });
  const tags = ['Compatibility API'];
  return [
    route({
      method: 'post',
      path: '/uploads/zip',
      summary: 'Upload a zip archive for POST /deploy/source',
      tags,
      request: {},
      multipart: { field: 'archive', description: 'The zip archive' },
      audit: { resource: 'upload' },
      before: [uploadsLimit, can('deployment.create'), multipart],
      responses: { 201: { description: 'Stored', schema: UploadResult } },
      handler: async (_input, req, res) => {
        if (!req.file) throw new AppError('INVALID_REQUEST', 'Missing the multipart file part "archive".');
        try {
          const u = await ctx.uploads.accept(principalOf(req), req.file);
          res.status(201).json({
            uploadId: u._id,
            filename: u.filename,
            size: u.size,
            sha256: u.sha256,
            expiresAt: u.expiresAt.toISOString(),
          });
        } finally {
          await fs.rm(req.file.path, { force: true });
        }
      },
    }),
  ];
}
