import type { z } from 'zod';

import type { CheckpointRecord, MessageRecord, ShareRecord } from '@shared/builder/types';

import type { CheckpointView, HeadView, MessageView, ShareView } from './schemas';

export const checkpointView = (c: CheckpointRecord): z.infer<typeof CheckpointView> => ({
  id: c._id,
  seq: c.seq,
  parent: c.parent ?? null,
  reason: c.reason,
  source: c.source ?? null,
  messageId: c.messageId ?? null,
  createdAt: c.createdAt.toISOString(),
  fileCount: c.files.length,
  bytes: c.files.reduce((n, f) => n + f.size, 0),
});

export const headView = (c: CheckpointRecord): z.infer<typeof HeadView> => ({
  ...checkpointView(c),
  files: c.files.map((f) => ({ path: f.path, sha256: f.sha256, size: f.size })),
});

export const messageView = (m: MessageRecord): z.infer<typeof MessageView> => ({
  id: m._id,
  role: m.role,
  content: m.content,
  createdAt: m.createdAt.toISOString(),
  turnId: m.turnId ?? null,
  checkpointId: m.checkpointId ?? null,
  reverted: m.reverted === true,
  error: (m.error as z.infer<typeof MessageView>['error']) ?? null,
});

export const shareView = (s: ShareRecord): z.infer<typeof ShareView> => ({
  slug: s._id,
  sessionId: s.sessionId,
  checkpointId: s.checkpointId,
  access: s.access,
  createdAt: s.createdAt.toISOString(),
  expiresAt: s.expiresAt?.toISOString() ?? null,
});
