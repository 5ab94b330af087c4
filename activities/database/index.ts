import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListMultipartUploadsCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { ApplicationFailure, Context } from '@temporalio/activity';

import {
  type BackupOutcome,
  DATABASE_FAILURES,
  type DatabaseWorkflowInput,
  type Retention,
} from '@shared/contracts/database';
import type { CredentialSealer } from '@shared/databases/credentials';
import { DUMP_FORMAT } from '@shared/databases/engines';
import { backupObjectKey } from '@shared/databases/keys';
import type { DatabaseStore } from '@shared/databases/store';
import type { BackupRecord, BackupTrigger, DatabaseRecord, DatabaseStatus } from '@shared/databases/types';
import { isDuplicateKey } from '@shared/db/mongo';
import { backupFact, databaseFact, type StorageLedger } from '@shared/usage/storage-ledger';

import type { DatabaseSpec, EngineDatabases } from '../providers/engine-databases';
import { type EngineVolumes, VolumeStorageError } from '../providers/engine-volumes';
import { scheduledAt } from '../scheduled-at';
import { retentionVictims } from './retention';

/** How often a long step tells Temporal it is alive: a worker killed mid-step is noticed within the timeout. */
const HEARTBEAT_MS = 5_000;

const ours = (type: string, message: string) => ApplicationFailure.create({ type, message, nonRetryable: true });

/** A step that heartbeats while it runs; our own faults are not retried, anything else is thrown for the policy. */
async function longStep<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    return await work();
  } catch (err) {
    if (err instanceof VolumeStorageError) throw ours(err.fault, err.message);
    if (err instanceof TypeError) throw ours('DatabaseInvalid', err.message);
    throw err;
  } finally {
    clearInterval(beat);
  }
}

/** Counts and hashes the bytes that pass through it. */
function measuring() {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ sizeBytes: size, sha256: hash.digest('hex') }) };
}

export interface DatabaseActivityDeps {
  engine: Pick<EngineDatabases, 'start' | 'remove' | 'dump' | 'restore'>;
  storage: Pick<EngineVolumes, 'ensure' | 'remove'>;
  store: DatabaseStore;
  /** Where the storage of databases and backups is dated, for usage: written as each appears and goes. */
  ledger: Pick<StorageLedger, 'started' | 'ended'>;
  sealer: Pick<CredentialSealer, 'open'>;
  s3: S3Client;
  bucket: string;
  /** Where a restore keeps a verified copy of the backup while it loads it (the worker's temp directory). */
  scratchDir?: string;
}

/**
 * The database workflows' activities: the server and its storage on the engine's host, dumps streamed to the object
 * store and back, and the records. Each may run again safely: a retried step finds what the first attempt made.
 */
export function createDatabaseActivities(deps: DatabaseActivityDeps) {
  const { store, s3, bucket, ledger } = deps;
  const scratch = deps.scratchDir ?? os.tmpdir();

  async function database(databaseId: string): Promise<DatabaseRecord> {
    const d = await store.getAny(databaseId);
    if (!d) throw ours('DatabaseUnknown', `database ${databaseId} has no record`);
    return d;
  }

  const specOf = (d: DatabaseRecord): DatabaseSpec => ({
    databaseId: d._id,
    orgId: d.orgId,
    engine: d.engine,
    volume: { volumeId: d.volumeId, orgId: d.orgId, sizeGb: d.sizeGb },
    credentials: deps.sealer.open(d),
  });

  async function backup(backupId: string): Promise<BackupRecord> {
    const b = await store.backups.getAny(backupId);
    if (!b) throw ours('BackupUnknown', `backup ${backupId} has no record`);
    return b;
  }

  /**
   * The backup's object removed, then the ledger's end (a complete backup held bytes until now), then its record marked
   * deleted: a step cut short anywhere finds the record as it was and does the rest.
   */
  async function deleteBackup(b: BackupRecord, at: Date): Promise<void> {
    await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: b.objectKey }));
    if (b.status === 'complete') await ledger.ended(backupFact(b, at));
    await store.backups.finish(b._id, { status: 'deleted' });
  }

  /** Multipart uploads to `key` left by an attempt that died: aborted, so nothing of them stays in the bucket. */
  async function abortStale(key: string): Promise<void> {
    const listed = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }));
    for (const u of listed.Uploads ?? [])
      if (u.Key === key && u.UploadId)
        await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: u.UploadId }));
  }

  /** The object's bytes, or BackupMissing when the store has no such object. */
  async function objectBody(b: BackupRecord): Promise<NodeJS.ReadableStream> {
    try {
      const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: b.objectKey }));
      if (!res.Body) throw new Error('the object store answered without a body');
      return res.Body as NodeJS.ReadableStream;
    } catch (err) {
      const name = (err as { name?: string }).name;
      if (name === 'NoSuchKey' || name === 'NotFound')
        throw ours(
          DATABASE_FAILURES.backupMissing,
          `backup ${b._id} is missing from the object store, so it cannot be restored; choose another backup (GET …/backups lists them)`,
        );
      throw err;
    }
  }

  /** The object read whole and checked against the record: BackupCorrupt, naming what differs, when it is not. */
  function checkAgainst(b: BackupRecord, got: { sizeBytes: number; sha256: string }): void {
    if (b.status !== 'complete' || b.sha256 === null || b.sizeBytes === null)
      throw ours(
        DATABASE_FAILURES.backupMissing,
        `backup ${b._id} is ${b.status}, not complete, so it cannot be restored; choose a complete backup`,
      );
    if (got.sizeBytes !== b.sizeBytes || got.sha256 !== b.sha256)
      throw ours(
        DATABASE_FAILURES.backupCorrupt,
        `backup ${b._id} is corrupt: the object store holds ${got.sizeBytes} bytes with SHA-256 ${got.sha256}, but ${b.sizeBytes} bytes with SHA-256 ${b.sha256} were recorded when it was taken; no database was changed. Choose another backup.`,
      );
  }

  return {
    async recordDatabaseStatus(input: { databaseId: string; status: DatabaseStatus; error: string | null }) {
      await store.setStatus(input.databaseId, input.status, input.error);
      if (input.status !== 'ready') return;
      // Ready again after a restore in place: the start already written stands.
      const d = await store.getAny(input.databaseId);
      if (d) await ledger.started(databaseFact(d, scheduledAt()));
    },

    /** What the database's own workflow starts with, read from its record. */
    async databaseWorkflowInput(input: { databaseId: string }): Promise<DatabaseWorkflowInput> {
      const d = await database(input.databaseId);
      return { databaseId: d._id, orgId: d.orgId, engine: d.engine, sizeGb: d.sizeGb, volumeId: d.volumeId };
    },

    /** Runs once server and storage are removed: the ledger's end first, so a retry after the record is gone misses nothing. */
    async removeDatabaseRecord(input: { databaseId: string }) {
      const d = await store.getAny(input.databaseId);
      if (d) await ledger.ended(databaseFact(d, scheduledAt()));
      await store.remove(input.databaseId);
    },

    /** Storage made (or found), the server started (or found running) and answering. */
    ensureDatabaseServer: (input: { databaseId: string }) =>
      longStep(async () => {
        const d = await database(input.databaseId);
        await deps.storage.ensure({ volumeId: d.volumeId, orgId: d.orgId, sizeGb: d.sizeGb });
        await deps.engine.start(specOf(d));
      }),

    /** The container, then the storage and every byte on it. */
    removeDatabaseServer: (input: { databaseId: string; volumeId: string }) =>
      longStep(async () => {
        await deps.engine.remove(input.databaseId);
        await deps.storage.remove(input.volumeId);
      }),

    /** Every backup and snapshot of the database: objects removed, records marked deleted. */
    async removeDatabaseBackups(input: { databaseId: string }) {
      const d = await store.getAny(input.databaseId);
      if (!d) return;
      const at = scheduledAt();
      for (;;) {
        const { items } = await store.backups.list(d.orgId, d._id, { limit: 100, offset: 0 });
        if (items.length === 0) return;
        for (const b of items) await deleteBackup(b, at);
      }
    },

    /** The backup's record, `running`, as its workflow starts; the same ID again is the same backup. */
    async startBackupRecord(input: {
      backupId: string;
      databaseId: string;
      trigger: BackupTrigger;
      createdBy: string;
      at?: number;
    }): Promise<void> {
      if (await store.backups.getAny(input.backupId)) return;
      const d = await database(input.databaseId);
      const record: BackupRecord = {
        _id: input.backupId,
        orgId: d.orgId,
        projectId: d.projectId,
        databaseId: d._id,
        databaseName: d.name,
        databaseKind: d.kind,
        engine: d.engine,
        trigger: input.trigger,
        status: 'running',
        objectKey: '',
        sizeBytes: null,
        sha256: null,
        error: null,
        createdBy: input.createdBy,
        createdAt: new Date(input.at ?? Date.now()),
        completedAt: null,
      };
      record.objectKey = backupObjectKey(record);
      await store.backups.insert(record).catch((err: unknown) => {
        // Inserted meanwhile (by the api, or an attempt that died after its insert): the same backup.
        if (!isDuplicateKey(err)) throw err;
      });
    },

    /**
     * The engine's own consistent dump, streamed to the object store as it is made, hashed and counted on the way. The
     * object exists only once the whole dump is uploaded (a multipart upload completes last); a failed dump aborts it,
     * and an attempt that died is aborted by the next. Returns what the record then holds.
     */
    dumpToObjectStore: (input: { backupId: string }) =>
      longStep(async (): Promise<BackupOutcome> => {
        const b = await backup(input.backupId);
        const d = await database(b.databaseId);
        // restoring: the safety backup a restore in place takes before it replaces the data.
        if (d.status !== 'ready' && d.status !== 'restoring')
          throw ours(
            DATABASE_FAILURES.notReady,
            `database ${d.name} is ${d.status}, so it cannot be backed up now; try again once it reads ready`,
          );
        await abortStale(b.objectKey);
        const dump = await deps.engine.dump(specOf(d));
        const measured = measuring();
        const upload = new Upload({
          client: s3,
          params: {
            Bucket: bucket,
            Key: b.objectKey,
            Body: dump.pipe(measured.stream),
            ContentType: DUMP_FORMAT[d.engine].contentType,
          },
          // One part in flight at a time: a dump is a stream, and memory stays at one part however big the database.
          queueSize: 1,
          leavePartsOnError: false,
        });
        // A dump that fails mid-way must not complete the upload: the engine adapter errors its stream, which
        // reaches the upload through the pipe.
        dump.on('error', (err: Error) => measured.stream.destroy(err));
        try {
          await upload.done();
        } catch (err) {
          const why = err instanceof Error ? err.message : String(err);
          throw ours(DATABASE_FAILURES.engineTool, `the backup of ${d.name} failed: ${why}`);
        }
        return { backupId: b._id, ...measured.result() };
      }),

    async finishBackup(
      input:
        | { backupId: string; status: 'complete'; sizeBytes: number; sha256: string }
        | { backupId: string; status: 'failed'; error: string },
    ): Promise<void> {
      const { backupId, ...change } = input;
      if (change.status === 'failed') {
        // The object, should a part of it have landed, is not a backup: gone with the failure.
        const b = await store.backups.getAny(backupId);
        if (b?.objectKey) {
          await abortStale(b.objectKey);
          await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: b.objectKey }));
        }
      }
      await store.backups.finish(backupId, change);
      if (change.status !== 'complete') return;
      const b = await store.backups.getAny(backupId);
      if (b) await ledger.started(backupFact({ ...b, sizeBytes: change.sizeBytes }, scheduledAt()));
    },

    /** Reads the backup's object whole and checks its size and SHA-256 against the record; changes nothing. */
    verifyBackup: (input: { backupId: string }) =>
      longStep(async () => {
        const b = await backup(input.backupId);
        if (b.status !== 'complete') checkAgainst(b, { sizeBytes: 0, sha256: '' });
        const measured = measuring();
        // Only counted and hashed: the bytes go nowhere.
        await pipeline(await objectBody(b), measured.stream, new Writable({ write: (_c, _e, done) => done() }));
        checkAgainst(b, measured.result());
      }),

    /**
     * Loads the backup into the database: the object is copied to a scratch file and checked there (what is loaded is
     * exactly what was checked, whatever happens to the object meanwhile), then the engine's own tool loads it.
     */
    restoreFromBackup: (input: { backupId: string; databaseId: string }) =>
      longStep(async () => {
        const b = await backup(input.backupId);
        const d = await database(input.databaseId);
        if (d.engine !== b.engine)
          throw ours('DatabaseInvalid', `a ${b.engine} backup cannot be restored into a ${d.engine} database`);
        const dir = await fs.promises.mkdtemp(path.join(scratch, 'slipway-restore-'));
        const file = path.join(dir, 'dump');
        try {
          const measured = measuring();
          await pipeline(await objectBody(b), measured.stream, fs.createWriteStream(file, { mode: 0o600 }));
          checkAgainst(b, measured.result());
          try {
            await deps.engine.restore(specOf(d), fs.createReadStream(file));
          } catch (err) {
            const why = err instanceof Error ? err.message : String(err);
            throw ours(DATABASE_FAILURES.engineTool, `restoring backup ${b._id} into ${d.name} failed: ${why}`);
          }
        } finally {
          await fs.promises.rm(dir, { recursive: true, force: true });
        }
      }),

    /**
     * Removes the schedule's backups that `retain` no longer keeps, decided from our records alone; the newest complete
     * backup is never among them. Returns the IDs removed.
     */
    async applyRetention(input: { databaseId: string; retain: Retention; now?: number }): Promise<string[]> {
      const complete = await store.backups.complete(input.databaseId);
      const now = new Date(input.now ?? scheduledAt().getTime());
      const victims = retentionVictims(complete, input.retain, now);
      for (const b of victims) await deleteBackup(b, now);
      return victims.map((b) => b._id);
    },
  };
}

export type DatabaseActivities = ReturnType<typeof createDatabaseActivities>;
