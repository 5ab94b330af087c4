import { zipSync } from 'fflate';

/**
 * What a person drops or picks becomes one zip, as POST /compat/uploads/zip takes it: a single .zip goes as it is;
 * files and folders are zipped here (fflate), each under its path relative to what was dropped.
 */
export async function archiveOf(files: { path: string; file: File }[]): Promise<File> {
  if (files.length === 1 && /\.zip$/i.test(files[0]!.file.name)) return files[0]!.file;
  const entries: Record<string, Uint8Array> = {};
  // A single dropped folder's own name is not part of the app's paths.
  const roots = new Set(files.map((f) => f.path.split('/')[0]));
  const strip = roots.size === 1 && files.every((f) => f.path.includes('/'));
  for (const f of files) {
    const path = strip ? f.path.slice(f.path.indexOf('/') + 1) : f.path;
    entries[path] = new Uint8Array(await f.file.arrayBuffer());
  }
  const bytes = zipSync(entries, { level: 6 });
  return new File([bytes as BlobPart], 'app.zip', { type: 'application/zip' });
}

/** Every file under a dropped entry (a folder is walked), with its path. */
export async function filesOfDrop(items: DataTransferItemList | null, plain: FileList | null) {
  const out: { path: string; file: File }[] = [];
  const entries = items ? [...items].map((i) => i.webkitGetAsEntry?.()).filter((e) => !!e) : [];
  if (entries.length === 0) {
    for (const file of plain ?? []) out.push({ path: file.name, file });
    return out;
  }
  const walk = async (entry: FileSystemEntry, prefix: string): Promise<void> => {
    if (entry.isFile) {
      const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
      out.push({ path: `${prefix}${entry.name}`, file });
      return;
    }
    const reader = (entry as FileSystemDirectoryEntry).createReader();
    for (;;) {
      const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) break;
      for (const child of batch) await walk(child, `${prefix}${entry.name}/`);
    }
  };
  for (const e of entries) await walk(e, '');
  return out;
}

/** Files from an <input type="file"> (a folder pick gives each file its relative path). */
export const filesOfInput = (list: FileList | null) =>
  [...(list ?? [])].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
