import { useQueryClient } from '@tanstack/react-query';
import { type DragEvent, type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';

import { call } from '../../api/client';
import { Button, ErrorNote, Page, Section, SelectField, TextField } from '../../ui';
import { intOrUndefined, ProjectSelect } from '../databases/shared';
import type { Deployment } from './types';
import { archiveOf, filesOfDrop, filesOfInput } from './zip';

type Source = 'upload' | 'image' | 'git';

/** A zip, as the compat origin takes uploads (the session cookie works there too); its ID goes into a deploy. */
export async function uploadZip(archive: File): Promise<string> {
  const form = new FormData();
  form.set('archive', archive, archive.name);
  return (await call<{ uploadId: string }>('POST', '/compat/uploads/zip', { form })).uploadId;
}

/** The zone a zip, files or a folder are dropped on, with file inputs for those who do not drag. */
export function DropZone({ onFiles, label }: { onFiles: (f: { path: string; file: File }[]) => void; label: string }) {
  const [over, setOver] = useState(false);
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    void filesOfDrop(e.dataTransfer.items, e.dataTransfer.files).then(onFiles);
  };
  return (
    <div
      className={`deployments-drop${over ? ' deployments-drop-over' : ''}`}
      role="region"
      aria-label={label}
      onDragOver={(e) => {
        e.preventDefault();
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={drop}
    >
      <p>Drop a .zip, files or a folder here, or choose them:</p>
      <TextField
        label="Zip file or files"
        type="file"
        multiple
        onChange={(e) => onFiles(filesOfInput(e.target.files))}
      />
      <TextField
        label="A folder"
        type="file"
        {...({ webkitdirectory: '' } as object)}
        onChange={(e) => onFiles(filesOfInput(e.target.files))}
      />
    </div>
  );
}

export function NewDeployment() {
  const navigate = useNavigate();
  const client = useQueryClient();
  const [source, setSource] = useState<Source>('upload');
  const [name, setName] = useState('');
  const [port, setPort] = useState('');
  const [projectId, setProjectId] = useState('');
  const [image, setImage] = useState('');
  const [repoUrl, setRepoUrl] = useState('');
  const [branch, setBranch] = useState('');
  const [files, setFiles] = useState<{ path: string; file: File }[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const common = { name, port: intOrUndefined(port), ...(projectId ? { projectId } : {}) };
      let body: Record<string, unknown>;
      if (source === 'image') body = { ...common, image };
      else if (source === 'git') body = { ...common, repoUrl, ...(branch ? { branch } : {}) };
      else {
        if (files.length === 0) throw new Error('Drop or choose a zip, files or a folder first.');
        body = { ...common, uploadId: await uploadZip(await archiveOf(files)) };
      }
      const made = await call<{ deployment: Deployment }>('POST', '/platform/deployments', { body });
      // The lists read before it do not show it yet; the detail page follows the build live from here.
      await client.invalidateQueries({
        predicate: (q) => String(q.queryKey[0]).startsWith('/platform/deployments?'),
      });
      void navigate(`/deployments/${made.deployment.id}`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page title="New deployment">
      <Section title="What to deploy">
        <form onSubmit={(e) => void submit(e)}>
          <SelectField
            label="Source"
            value={source}
            onChange={(e) => setSource(e.target.value as Source)}
            options={[
              { value: 'upload', label: 'A zip, files or a folder (built here)' },
              { value: 'image', label: 'A container image' },
              { value: 'git', label: 'A Git repository (built here)' },
            ]}
          />
          {source === 'upload' && (
            <>
              <DropZone label="Drop zone for the app's files" onFiles={setFiles} />
              <p aria-live="polite">
                {files.length === 0
                  ? 'Nothing chosen yet.'
                  : `${files.length} file${files.length === 1 ? '' : 's'} chosen: ${files
                      .slice(0, 3)
                      .map((f) => f.path)
                      .join(', ')}${files.length > 3 ? '…' : ''}`}
              </p>
            </>
          )}
          {source === 'image' && (
            <TextField
              label="Image"
              hint="e.g. nginx:1.27 or registry.example.com/team/app:2"
              value={image}
              onChange={(e) => setImage(e.target.value)}
              required
            />
          )}
          {source === 'git' && (
            <>
              <TextField
                label="Repository URL"
                hint="https:// address of the repository"
                value={repoUrl}
                onChange={(e) => setRepoUrl(e.target.value)}
                required
              />
              <TextField
                label="Branch"
                hint="The repository's default branch when empty"
                value={branch}
                onChange={(e) => setBranch(e.target.value)}
              />
            </>
          )}
          <TextField
            label="Name"
            hint="Lowercase letters, digits and “-”; it becomes part of the URL."
            value={name}
            onChange={(e) => setName(e.target.value)}
            required
            autoComplete="off"
          />
          <TextField
            label="Port"
            hint="The port the app listens on; the api's default when empty."
            inputMode="numeric"
            value={port}
            onChange={(e) => setPort(e.target.value)}
          />
          <ProjectSelect value={projectId} onChange={setProjectId} />
          <ErrorNote error={error} />
          <div className="form-actions">
            <Button type="submit" variant="primary" busy={busy}>
              Deploy
            </Button>
          </div>
        </form>
      </Section>
    </Page>
  );
}
