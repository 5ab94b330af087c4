import type { Manifest } from '@shared/builder/types';

/** What a builder turn tells the model besides the user's words. */

/** How many earlier messages a turn sends along: the conversation, not the whole history. */
export const HISTORY_MESSAGES = 30;

/** The system prompt of every step: the builder's role, the tools' rules and the app's files as they stand. */
export function systemPrompt(files: Manifest): string {
  const paths = Object.keys(files).sort();
  const tree = paths.length ? paths.map((p) => `- ${p} (${files[p]!.size} bytes)`).join('\n') : '(no files yet)';
  return [
    "You build and change a web app's files for the user. The app's files now:",
    tree,
    'Change files only through the tools: write_file writes a whole file, delete_file and rename_file do what they say,',
    'read_file shows a file before you change part of it. Paths are relative, /-separated. When done, answer in a few',
    'sentences saying what you changed.',
  ].join('\n');
}
