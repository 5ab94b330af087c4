import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import type Docker from 'dockerode';
import tar from 'tar-stream';

export interface ImageFile {
  layer: string;
  path: string;
  content: Buffer;
}

/**
 * Every regular file of every layer of `image`, read from `docker save` (the layers as the engine stores them,
 * so a file a later layer deletes is still seen in the layer that added it). Returns the layers' names as the
 * image's manifest lists them and as they were read, so a caller can check that none was missed.
 */
export async function everyLayerFile(
  docker: Docker,
  image: string,
  /** Layers already read (by their name in the save, the layer's ID): drained, not visited again. Updated. */
  skip: Set<string>,
  visit: (file: ImageFile) => void,
): Promise<{ manifestLayers: string[]; readLayers: string[] }> {
  const saved = await docker.getImage(image).get();
  const outer = tar.extract();
  const readLayers: string[] = [];
  let manifest = '';
  outer.on('entry', (header, stream, next) => {
    if (header.name.endsWith('/layer.tar') && skip.has(header.name)) {
      readLayers.push(header.name);
      stream.on('end', () => next());
      stream.resume();
    } else if (header.name.endsWith('/layer.tar')) {
      readLayers.push(header.name);
      skip.add(header.name);
      const inner = tar.extract();
      inner.on('entry', (h, s, n) => {
        const chunks: Buffer[] = [];
        s.on('data', (c: unknown) => {
          if (h.type === 'file') chunks.push(c as Buffer);
        });
        s.on('end', () => {
          if (h.type === 'file') visit({ layer: header.name, path: h.name, content: Buffer.concat(chunks) });
          n();
        });
      });
      inner.on('finish', () => next());
      inner.on('error', (err) => outer.destroy(err));
      stream.pipe(inner);
    } else {
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => {
        chunks.push(c as Buffer);
      });
      stream.on('end', () => {
        if (header.name === 'manifest.json') manifest = Buffer.concat(chunks).toString();
        next();
      });
    }
  });
  await new Promise<void>((resolve, reject) => {
    outer.on('finish', resolve);
    outer.on('error', reject);
    saved.on('error', reject);
    saved.pipe(outer);
  });
  const manifestLayers = (JSON.parse(manifest) as { Layers: string[] }[])[0]!.Layers;
  return { manifestLayers, readLayers };
}

const PEM = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g;

/**
 * What identifies the host's CA bundle inside an image: its sha256, and the body of each certificate in it that
 * is not one of Debian's own (the CA a registry proxy adds), which a base image's ca-certificates never has.
 */
export async function hostBundleMarks(bundle: string): Promise<{ sha256: string; addedCerts: string[] }> {
  const text = await fs.readFile(bundle, 'utf8');
  const debian = new Set<string>();
  const walk = async (dir: string): Promise<void> => {
    for (const e of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.crt'))
        for (const m of (await fs.readFile(p, 'utf8')).matchAll(PEM)) debian.add(m[1]!.trim());
    }
  };
  await walk('/usr/share/ca-certificates');
  const addedCerts = [...text.matchAll(PEM)].map((m) => m[1]!.trim()).filter((body) => !debian.has(body));
  return { sha256: createHash('sha256').update(text).digest('hex'), addedCerts };
}
