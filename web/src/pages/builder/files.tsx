import { useState } from 'react';

import { useApi, useChange } from '../../api/hooks';
import { Button, ErrorNote, Loading, Section, TextField } from '../../ui';
import { CodeEditor } from './editor';
import type { FileContent, FileEntry, Session } from './types';
import { sessionPath } from './types';

interface Dir {
  dirs: Map<string, Dir>;
  files: FileEntry[];
}

function tree(files: FileEntry[]): Dir {
  const root: Dir = { dirs: new Map(), files: [] };
  for (const f of files) {
    const parts = f.path.split('/');
    let d = root;
    for (const part of parts.slice(0, -1)) {
      let next = d.dirs.get(part);
      if (!next) d.dirs.set(part, (next = { dirs: new Map(), files: [] }));
      d = next;
    }
    d.files.push(f);
  }
  return root;
}

function TreeList({ dir, open, onOpen }: { dir: Dir; open: string | null; onOpen: (p: string) => void }) {
  return (
    <ul>
      {[...dir.dirs.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, sub]) => (
          <li key={`d:${name}`}>
            <span className="builder-dir">{name}/</span>
            <TreeList dir={sub} open={open} onOpen={onOpen} />
          </li>
        ))}
      {[...dir.files]
        .sort((a, b) => a.path.localeCompare(b.path))
        .map((f) => (
          <li key={f.path}>
            <button
              type="button"
              className="builder-file"
              aria-current={open === f.path ? 'true' : undefined}
              aria-label={`${f.path}, ${f.size} bytes`}
              onClick={() => onOpen(f.path)}
            >
              {f.path.split('/').pop()}
            </button>
          </li>
        ))}
    </ul>
  );
}

/** The head's files as a tree, and the open one in the editor; a save is a new checkpoint made against the head. */
export function Files({ session: s, canChange }: { session: Session; canChange: boolean }) {
  const files = s.head?.files ?? [];
  const [open, setOpen] = useState<string | null>(null);
  const [newPath, setNewPath] = useState('');
  const openFile = open && files.some((f) => f.path === open) ? open : null;
  return (
    <Section title="Files">
      <div className="builder-files">
        <nav aria-label="File tree" className="builder-tree">
          {files.length === 0 ? (
            <p className="muted">No file yet: ask the model for an app, or create a file.</p>
          ) : (
            <TreeList dir={tree(files)} open={openFile} onOpen={setOpen} />
          )}
          {canChange && <NewFile session={s} path={newPath} setPath={setNewPath} onCreated={setOpen} />}
        </nav>
        <div className="builder-editor-pane">
          {openFile && s.head ? (
            <OpenFile
              key={`${openFile}@${s.head.id}`}
              session={s}
              path={openFile}
              headId={s.head.id}
              canChange={canChange}
            />
          ) : (
            <p className="muted">Choose a file in the tree to read and edit it.</p>
          )}
        </div>
      </div>
    </Section>
  );
}

function NewFile({
  session: s,
  path,
  setPath,
  onCreated,
}: {
  session: Session;
  path: string;
  setPath: (p: string) => void;
  onCreated: (p: string) => void;
}) {
  const create = useChange<void, unknown>('PUT', `${sessionPath(s.id)}/files`, {
    invalidates: [sessionPath(s.id)],
    body: () => ({ files: [{ path: path.trim(), content: '' }] }),
    onSuccess: () => {
      onCreated(path.trim());
      setPath('');
    },
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (path.trim()) create.mutate();
      }}
    >
      <TextField
        label="New file"
        placeholder="src/app.js"
        value={path}
        onChange={(e) => setPath(e.target.value)}
        autoComplete="off"
      />
      <ErrorNote error={create.error} />
      <Button type="submit" busy={create.isPending} disabled={!path.trim()}>
        Create file
      </Button>
    </form>
  );
}

function OpenFile({
  session: s,
  path,
  headId,
  canChange,
}: {
  session: Session;
  path: string;
  headId: string;
  canChange: boolean;
}) {
  // Read at the head's checkpoint: the answer never changes, so the cache is right for as long as the head is.
  const file = useApi<FileContent>(
    `${sessionPath(s.id)}/files?path=${encodeURIComponent(path)}&checkpointId=${encodeURIComponent(headId)}`,
  );
  const [draft, setDraft] = useState<string | null>(null);
  const save = useChange<void, { created: boolean }>('PUT', `${sessionPath(s.id)}/files`, {
    invalidates: [sessionPath(s.id)],
    body: () => ({ files: [{ path, content: draft ?? '' }], expectedHead: headId }),
  });
  if (file.error) return <ErrorNote error={file.error} />;
  if (!file.data) return <Loading what={`Reading ${path}`} />;
  if (file.data.encoding === 'base64')
    return (
      <p className="muted">
        {path} is not text ({file.data.size} bytes): the editor shows text files only.
      </p>
    );
  const changed = draft !== null && draft !== file.data.content;
  return (
    <form
      aria-label={`Edit ${path}`}
      onSubmit={(e) => {
        e.preventDefault();
        if (changed) save.mutate();
      }}
    >
      <h3 className="builder-path">{path}</h3>
      <CodeEditor path={path} doc={file.data.content} onChange={setDraft} readOnly={!canChange} />
      <ErrorNote error={save.error} />
      {canChange && (
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={save.isPending} disabled={!changed}>
            Save {path}
          </Button>
          {changed && <span className="muted">Unsaved changes</span>}
        </div>
      )}
    </form>
  );
}
