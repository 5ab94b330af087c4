import yazl from 'yazl';

/** Builds a zip in memory from name → content. */
export function makeZip(files: Record<string, string>): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) zip.addBuffer(Buffer.from(content), name);
  zip.end();
  const chunks: Buffer[] = [];
  return new Promise((resolve, reject) => {
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}

export function archiveForm(content: Buffer, filename = 'site.zip', field = 'archive'): FormData {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(content)], { type: 'application/zip' }), filename);
  return form;
}
