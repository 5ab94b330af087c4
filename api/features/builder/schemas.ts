import { z } from 'zod';

import { AI_ERROR_CODES } from '@shared/ai/errors';
import { PATH_DOCUMENT_PATTERN, PATH_PATTERN, PATH_RULES_TEXT, pathProblem } from '@shared/builder/files';
import {
  BUILDER_LIMITS,
  CHECKPOINT_REASONS,
  MESSAGE_ROLES,
  SHARE_ACCESS,
  TURN_EVENT_TYPES,
} from '@shared/builder/types';

import { queryInt, text } from '../../http/fields';

/** Requests and responses of the AI builder routes: the single source of their types and of the document. */

const L = BUILDER_LIMITS;

/** Stated once, in every route's description that takes files: the caps the store enforces. */
export const LIMITS_TEXT =
  `${PATH_RULES_TEXT}; at most ${L.maxPathLength} characters, 255 bytes per segment. ` +
  `Caps: ${L.maxFileBytes} bytes per file, ${L.maxFiles} files and ${L.maxSessionBytes} bytes per session, ${L.maxFilesPerSave} files per save, and a JSON body of at most 1 MB per request.`;

const id = (what: string) => z.uuid(`a ${what} ID in UUID format`);
const projectId = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/, 'a project ID');
const model = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces, as the provider names the model');
const title = text(120);

/**
 * The pattern states the path rules in the OpenAPI document; the message is pathProblem's, naming the rule broken
 * (and the character, for a hidden one). The segments' byte limit is the one rule only the refinement checks.
 */
const filePath = z
  .string()
  .max(L.maxPathLength, { error: `the path is longer than ${L.maxPathLength} characters`, abort: true })
  .regex(PATH_PATTERN, {
    error: (iss) => `the path ${pathProblem(String(iss.input)) ?? 'is not a valid relative path'}`,
    abort: true,
  })
  .superRefine((p, ctx) => {
    const problem = pathProblem(p);
    if (problem) ctx.addIssue({ code: 'custom', message: `the path ${problem}` });
  })
  .meta({ description: `A file of the session. ${PATH_RULES_TEXT}.`, pattern: PATH_DOCUMENT_PATTERN });

export const SessionIdParams = z.object({ id: id('session') });
export const ProjectSessionParams = z.object({ projectId });
export const ShareSlugParams = z.object({
  slug: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/, 'a share slug as returned by POST /builder/sessions/{id}/share'),
});
export const TurnEventsParams = z.object({ id: id('session'), turnId: id('turn') });

export const ListSessionsQuery = z.object({
  limit: queryInt(1, 200).optional().meta({ description: 'At most this many sessions (default 100)' }),
});

export const FileQuery = z.object({
  path: filePath,
  checkpointId: id('checkpoint')
    .optional()
    .meta({ description: "Read the file as this checkpoint of the session has it; absent: the session's head" }),
});

export const CreateSessionRequest = z
  .object({ projectId, title: title.optional(), providerId: id('AI provider').optional(), model: model.optional() })
  .strict()
  .meta({ id: 'CreateBuilderSessionRequest' });

export const ProjectSessionRequest = z
  .object({ title: title.optional() })
  .strict()
  .meta({ id: 'ProjectBuilderSessionRequest' });

const expectedHead = id('checkpoint').nullable().optional().meta({
  description:
    'The head the change was made against; a session whose head is another is refused with 409 (null: a session with no checkpoint yet)',
});

const FileChange = z.union([
  z
    .object({
      path: filePath,
      content: z.string(),
      encoding: z.enum(['utf8', 'base64']).default('utf8'),
    })
    .strict(),
  z.object({ path: filePath, delete: z.literal(true) }).strict(),
]);

export const SaveFilesRequest = z
  .object({
    files: z
      .array(FileChange)
      .min(1)
      .max(L.maxFilesPerSave)
      .refine((fs) => new Set(fs.map((f) => f.path)).size === fs.length, 'each path once'),
    expectedHead,
  })
  .strict()
  .meta({ id: 'SaveBuilderFilesRequest' });

export const RevertRequest = z
  .object({ checkpointId: id('checkpoint'), expectedHead })
  .strict()
  .meta({ id: 'RevertBuilderSessionRequest' });

export const SetModelRequest = z.object({ model }).strict().meta({ id: 'SetBuilderModelRequest' });

export const SetProviderRequest = z
  .object({ providerId: id('AI provider'), model: model.optional() })
  .strict()
  .meta({ id: 'SetBuilderProviderRequest' });

export const ShareRequest = z
  .object({
    access: z.enum(SHARE_ACCESS).default('view'),
    expiresIn: z
      .number()
      .int()
      .min(60)
      .max(90 * 86400)
      .optional()
      .meta({ description: 'Seconds until the link stops working; absent: until revoked' }),
  })
  .strict()
  .meta({ id: 'CreateBuilderShareRequest' });

export const RemixRequest = z
  .object({ projectId, title: title.optional() })
  .strict()
  .meta({ id: 'RemixBuilderShareRequest' });

export const MessageRequest = z
  .object({
    content: text(L.maxMessageChars),
    idempotencyKey: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,128}$/, 'letters, digits, "_", ".", ":" and "-", at most 128')
      .optional()
      .meta({
        description:
          'The same key on the same session is the same turn: a retry (or a reconnecting stream) attaches to it instead of starting another',
      }),
  })
  .strict()
  .meta({ id: 'BuilderMessageRequest' });

export const TurnEventsQuery = z.object({
  after: queryInt(0, Number.MAX_SAFE_INTEGER)
    .optional()
    .meta({ description: 'Replay events after this seq (the Last-Event-ID header does the same)' }),
});

// ----- responses -----

const FileView = z.object({ path: z.string(), sha256: z.string(), size: z.number().int() });

export const CheckpointView = z
  .object({
    id: z.uuid(),
    seq: z.number().int(),
    parent: z.uuid().nullable(),
    reason: z.enum(CHECKPOINT_REASONS),
    source: z.uuid().nullable().meta({ description: 'revert: the checkpoint restored; remix: the one copied' }),
    messageId: z.uuid().nullable(),
    createdAt: z.iso.datetime(),
    fileCount: z.number().int(),
    bytes: z.number().int(),
  })
  .meta({ id: 'BuilderCheckpoint' });

export const HeadView = CheckpointView.extend({ files: z.array(FileView) }).meta({ id: 'BuilderHead' });

const TurnError = z.object({
  code: z.union([z.enum(AI_ERROR_CODES), z.enum(['provider_missing', 'internal'])]),
  message: z.string(),
});

export const MessageView = z
  .object({
    id: z.uuid(),
    role: z.enum(MESSAGE_ROLES),
    content: z.string(),
    createdAt: z.iso.datetime(),
    turnId: z.uuid().nullable(),
    checkpointId: z.uuid().nullable(),
    reverted: z.boolean().meta({ description: 'Written after a checkpoint the session was later reverted to' }),
    error: TurnError.nullable(),
  })
  .meta({ id: 'BuilderMessage' });

export const SessionView = z
  .object({
    id: z.uuid(),
    projectId: z.string(),
    title: z.string(),
    providerId: z.uuid().nullable(),
    model: z.string().nullable(),
    isDefault: z.boolean(),
    remixedFrom: z.object({ sessionId: z.uuid(), checkpointId: z.uuid(), slug: z.string() }).nullable(),
    createdAt: z.iso.datetime(),
    head: HeadView.nullable(),
    checkpoints: z.array(CheckpointView).meta({ description: 'The latest checkpoints, newest first' }),
    messages: z.array(MessageView).meta({ description: 'The latest messages, oldest first; reverted ones included' }),
    runningTurn: z.object({ turnId: z.uuid(), startedAt: z.iso.datetime() }).nullable(),
    sandbox: z
      .record(z.string(), z.unknown())
      .nullable()
      .meta({ description: 'The live preview (inSync, applied and head checkpoints), or null without one' }),
  })
  .meta({ id: 'BuilderSession' });

export const SessionSummaryView = z
  .object({
    id: z.uuid(),
    projectId: z.string(),
    title: z.string(),
    providerId: z.uuid().nullable(),
    model: z.string().nullable(),
    isDefault: z.boolean(),
    remixedFrom: z.object({ sessionId: z.uuid(), checkpointId: z.uuid(), slug: z.string() }).nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'BuilderSessionSummary' });

export const FileContentView = z
  .object({
    path: z.string(),
    sha256: z.string(),
    size: z.number().int(),
    checkpointId: z.uuid().meta({ description: 'The checkpoint the content was read from' }),
    encoding: z.enum(['utf8', 'base64']).meta({ description: 'utf8 for text; base64 for bytes that are not UTF-8' }),
    content: z.string(),
  })
  .meta({ id: 'BuilderFileContent' });

export const ShareView = z
  .object({
    slug: z.string(),
    sessionId: z.uuid(),
    checkpointId: z.uuid(),
    access: z.enum(SHARE_ACCESS),
    createdAt: z.iso.datetime(),
    expiresAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'BuilderShare' });

export const SharedCheckpointView = ShareView.extend({ title: z.string(), files: z.array(FileView) }).meta({
  id: 'BuilderSharedCheckpoint',
});

export const TurnResultView = z
  .object({
    turnId: z.uuid(),
    status: z.enum(['completed', 'failed']),
    message: MessageView.nullable().meta({ description: "The assistant's message" }),
    checkpoint: CheckpointView.nullable().meta({ description: 'The checkpoint the turn made (null: no file changed)' }),
    error: TurnError.nullable(),
  })
  .meta({ id: 'BuilderTurnResult' });

/** A turn still running when the message's request stopped waiting: it goes on, followed at eventsUrl. */
export const TurnRunningView = z
  .object({
    turnId: z.uuid(),
    status: z.literal('running'),
    eventsUrl: z.string().meta({ description: "The turn's events (Server-Sent Events) up to turn.completed" }),
  })
  .meta({ id: 'BuilderTurnRunning' });

export const TURN_EVENTS_TEXT =
  `Server-Sent Events, one per stored event of the turn, in order: \`id:\` is its seq, \`event:\` its type (${TURN_EVENT_TYPES.join(', ')}), \`data:\` a JSON object. ` +
  'The stream ends after turn.completed. Resume after a lost connection with GET /builder/sessions/{id}/turns/{turnId}/events and the Last-Event-ID header (the turnId is in turn.started), or POST the same message again with the same idempotencyKey and Last-Event-ID.';
