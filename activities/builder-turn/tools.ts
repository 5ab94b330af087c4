import type { ChatMessage, ToolCall, ToolSpec } from '@shared/ai/types';
import { type BlobStore, checkManifest, pathProblem } from '@shared/builder/files';
import type { Manifest, TurnEventType } from '@shared/builder/types';
import type { TurnChanges } from '@shared/contracts/builder-turn';
import { AppError } from '@shared/errors';

const path = (description: string) => ({ type: 'string', description });

/** The tools a model edits files with (write, delete, rename; read for the files it asks to see). */
export const TOOLS: ToolSpec[] = [
  {
    name: 'write_file',
    description: 'Create or replace a file with the whole content given.',
    parameters: {
      type: 'object',
      properties: { path: path('Relative path, e.g. index.html or src/app.js'), content: { type: 'string' } },
      required: ['path', 'content'],
    },
  },
  {
    name: 'delete_file',
    description: 'Delete a file.',
    parameters: { type: 'object', properties: { path: path('The file to delete') }, required: ['path'] },
  },
  {
    name: 'rename_file',
    description: 'Move a file to another path (replacing a file there).',
    parameters: {
      type: 'object',
      properties: { from: path('The file now'), to: path('Its new path') },
      required: ['from', 'to'],
    },
  },
  {
    name: 'read_file',
    description: "Read a file's current content.",
    parameters: { type: 'object', properties: { path: path('The file to read') }, required: ['path'] },
  },
];

/** A model asked for this much of one file at most; more is cut with a note, so one read cannot fill its context. */
const READ_CAP = 64 * 1024;

type Emit = (type: TurnEventType, data: Record<string, unknown>) => Promise<void>;

class ToolRefusal extends Error {}

const str = (args: Record<string, unknown>, name: string): string => {
  const v = args[name];
  if (typeof v !== 'string') throw new ToolRefusal(`${name} must be a string`);
  return v;
};

const validPath = (args: Record<string, unknown>, name: string): string => {
  const p = str(args, name);
  const problem = pathProblem(p);
  if (problem) throw new ToolRefusal(`the path ${JSON.stringify(p)} ${problem}`);
  return p;
};

/**
 * Runs a model's tool calls in order against the turn's working files. A call that cannot be done (bad path, too
 * large, no such file) answers the model with why, as a tool error it can act on; it never ends the turn.
 * Write contents go to S3 at once (content-addressed); the checkpoint is made when the turn ends.
 */
export async function runTools(
  calls: ToolCall[],
  ctx: { orgId: string; files: Manifest; changes: TurnChanges; blobs: BlobStore; emit: Emit },
): Promise<{ calls: ToolCall[]; results: ChatMessage[]; changes: TurnChanges }> {
  const files = { ...ctx.files };
  const changes = { ...ctx.changes };
  const results: ChatMessage[] = [];
  const shown: ToolCall[] = [];
  const set = (p: string, entry: Manifest[string] | null) => {
    if (entry) files[p] = entry;
    else delete files[p];
    changes[p] = entry;
  };

  for (const call of calls) {
    const args = call.arguments;
    // The transcript keeps what was written out of later calls: the model reads a file back when it needs it.
    let kept = args;
    try {
      let answer: string;
      if (call.name === 'write_file') {
        const p = validPath(args, 'path');
        const content = str(args, 'content');
        const entry = await ctx.blobs.put(ctx.orgId, Buffer.from(content, 'utf8'));
        checkManifest({ ...files, [p]: entry });
        set(p, entry);
        kept = { path: p, content: `(${entry.size} bytes written; read_file shows them)` };
        await ctx.emit('file.write', { path: p, size: entry.size, sha256: entry.sha256 });
        answer = `Wrote ${p} (${entry.size} bytes).`;
      } else if (call.name === 'delete_file') {
        const p = validPath(args, 'path');
        if (!files[p]) throw new ToolRefusal(`there is no file ${p}`);
        set(p, null);
        await ctx.emit('file.delete', { path: p });
        answer = `Deleted ${p}.`;
      } else if (call.name === 'rename_file') {
        const from = validPath(args, 'from');
        const to = validPath(args, 'to');
        const entry = files[from];
        if (!entry) throw new ToolRefusal(`there is no file ${from}`);
        if (from !== to) {
          const next = { ...files, [to]: entry };
          delete next[from];
          checkManifest(next);
          set(from, null);
          set(to, entry);
        }
        await ctx.emit('file.rename', { from, to });
        answer = `Renamed ${from} to ${to}.`;
      } else if (call.name === 'read_file') {
        const p = validPath(args, 'path');
        const entry = files[p];
        if (!entry) throw new ToolRefusal(`there is no file ${p}`);
        const text = (await ctx.blobs.get(ctx.orgId, entry.sha256)).toString('utf8');
        answer = text.length > READ_CAP ? `${text.slice(0, READ_CAP)}\n…(cut at ${READ_CAP} characters)` : text;
      } else {
        throw new ToolRefusal(`there is no tool ${call.name}; use ${TOOLS.map((t) => t.name).join(', ')}`);
      }
      results.push({ role: 'tool', toolCallId: call.id, content: answer });
    } catch (err) {
      if (!(err instanceof ToolRefusal) && !(err instanceof AppError)) throw err;
      results.push({ role: 'tool', toolCallId: call.id, content: `Refused: ${err.message}`, isError: true });
    }
    shown.push({ ...call, arguments: kept });
  }
  return { calls: shown, results, changes };
}
