import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import { GetObjectCommand } from '@aws-sdk/client-s3';

import { extractZip, soleTopLevelDir } from '@shared/build/extract';
import { cloneCheckout, cloneRepository } from '@shared/build/git';
import { GitSecretRefusedError } from '@shared/secrets/vault';

import { type BuildDeps, buildFailed, type BuildInput } from './build-deps';

/**
 * A deployment's source in `work`: the uploaded zip fetched from S3 and extracted within the build's bounds, or a
 * shallow clone (its token opened from the vault only once the secret's binding is checked again). Returns the
 * directory to build, and the commit or the upload it came from.
 */
export async function fetchSource(
  deps: Pick<BuildDeps, 'uploads' | 's3' | 'vault' | 'config'>,
  input: BuildInput,
  work: string,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<{ dir: string; commit?: string; upload?: { sha256: string; size: number } }> {
  const { config } = deps;
  const source = input.source;
  if (source.type === 'upload') {
    const upload = await deps.uploads.get(input.orgId, source.uploadId);
    if (!upload) throw buildFailed(`the upload ${source.uploadId} has expired or was deleted; upload it again`);
    log(`fetching ${upload.filename} (${upload.size} bytes, sha256 ${upload.sha256})`);
    const zipPath = path.join(work, 'source.zip');
    const object = await deps.s3.send(new GetObjectCommand({ Bucket: config.S3_BUCKET, Key: upload.key }), {
      abortSignal: signal,
    });
    await pipeline(object.Body as NodeJS.ReadableStream, fs.createWriteStream(zipPath), { signal });
    const dir = path.join(work, 'src');
    const extracted = await extractZip(zipPath, dir, {
      maxEntries: config.BUILD_MAX_ENTRIES,
      maxUncompressedBytes: config.BUILD_MAX_UNCOMPRESSED_BYTES,
    }).catch((err: unknown) => {
      throw buildFailed(err instanceof Error ? err.message : String(err));
    });
    await fs.promises.rm(zipPath, { force: true });
    log(`extracted ${extracted.entries} entries (${extracted.bytes} bytes)`);
    return { dir: await soleTopLevelDir(dir), upload: { sha256: upload.sha256, size: upload.size } };
  }

  let token: string | undefined;
  if (source.gitTokenSecretId) {
    // Checked again here, before the value is opened: the api's check may be older than the secret's binding.
    token = await deps.vault
      .revealForGit(input.orgId, source.gitTokenSecretId, {
        url: source.repoUrl,
        environment: source.vaultEnvironment ?? 'PRODUCTION',
        allowHttp: config.ALLOW_PRIVATE_GIT_HOSTS,
      })
      .catch((err: unknown) => {
        throw err instanceof GitSecretRefusedError ? buildFailed(`gitTokenSecretId is refused: ${err.message}`) : err;
      });
    if (token === undefined) {
      throw buildFailed(`the secret ${source.gitTokenSecretId} (gitTokenSecretId) no longer exists`);
    }
  }
  const cloneTimeout = AbortSignal.timeout(config.GIT_CLONE_TIMEOUT_S * 1000);
  const { commit } = await cloneRepository({
    url: source.repoUrl,
    ...(source.branch ? { branch: source.branch } : {}),
    ...(source.commit ? { commit: source.commit } : {}),
    ...(token ? { token } : {}),
    dest: work,
    maxBytes: config.GIT_MAX_BYTES,
    allowPrivateHosts: config.ALLOW_PRIVATE_GIT_HOSTS,
    signal: AbortSignal.any([signal, cloneTimeout]),
    log,
  }).catch((err: unknown) => {
    if (cloneTimeout.aborted && !signal.aborted) {
      throw buildFailed(`git clone took longer than ${config.GIT_CLONE_TIMEOUT_S} s and was stopped`);
    }
    if (err instanceof Error && err.name === 'GitError') throw buildFailed(err.message);
    throw err;
  });
  log(`cloned commit ${commit}`);
  return { dir: cloneCheckout(work), commit };
}
