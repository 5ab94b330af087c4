import { randomUUID } from 'node:crypto';

import { type Client, WorkflowFailedError } from '@temporalio/client';

import type { AiProviders } from '@shared/ai-providers/providers';
import type { Authz } from '@shared/authz/authorize';
import {
  SOURCE_QUESTION_WORKFLOW,
  type SourceQuestionInput,
  type SourceQuestionOutcome,
  sourceQuestionVisibility,
  sourceQuestionWorkflowId,
} from '@shared/contracts/database-source';
import { type QueryLimits, type QueryResult, SourceQueryError } from '@shared/database-sources/endpoint';
import { type EndpointResolver, SOURCE_ENGINE_OF, SourceTargetError } from '@shared/database-sources/resolve';
import { describeSource, probeSource, runReadOnly } from '@shared/database-sources/runner';
import type { SourceStore } from '@shared/database-sources/store';
import type {
  DatabaseSourceRecord,
  SourceEngine,
  SourcePrivileges,
  SourceQuestionRecord,
  SourceTls,
} from '@shared/database-sources/types';
import type { DatabaseStore } from '@shared/databases/store';
import { isDuplicateKey } from '@shared/db/mongo';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';
import { PLAN_POLICIES } from '@shared/plans';
import type { ProjectStore } from '@shared/projects/store';
import { checkStatement, type SafetyVerdict } from '@shared/sql-safety';

import { insertWithinPlan, listVisible } from '../owned';

export interface SourceServiceDeps {
  store: SourceStore;
  resolver: EndpointResolver;
  databases: Pick<DatabaseStore, 'get'>;
  projects: Pick<ProjectStore, 'get'>;
  authz: Pick<Authz, 'visibility' | 'sees'>;
  aiProviders: Pick<AiProviders, 'list' | 'get'>;
  temporal: Client;
  lock: KeyedLock;
  taskQueue: string;
  quotaMultiplier: number;
  limits: { timeoutMs: number; maxRows: number; maxBytes: number };
  askWaitMs: number;
}

export const sourceNotFound = (id: string) =>
  new AppError(
    'DATABASE_SOURCE_NOT_FOUND',
    `No database source ${id} here; list them with GET /platform/database-sources.`,
    { sourceId: id },
  );

/** A statement the parser layer refused: said with the rule, and nothing was sent to the database. */
export function blocked(verdict: Extract<SafetyVerdict, { ok: false }>, extra: Record<string, unknown> = {}) {
  return new AppError(
    'STATEMENT_BLOCKED',
    `blocked by a safety check (rule ${verdict.rule}): ${verdict.message} Nothing was sent to the database.`,
    { rule: verdict.rule, ...extra },
  );
}

/** A driver's or server's failure, as the caller can act on it; their own message is the source owner's to read. */
export function queryFailure(err: unknown): never {
  if (err instanceof SourceTargetError)
    throw new AppError('SOURCE_UNREACHABLE', `The source cannot be queried: ${err.message}.`);
  if (err instanceof SourceQueryError) {
    if (err.kind === 'connect')
      throw new AppError(
        'SOURCE_UNREACHABLE',
        `Could not connect to the source or log in: ${err.message}. Check host, port, database, user, password and tls with PATCH, then POST …/test.`,
        err.sqlState ? { sqlState: err.sqlState } : {},
      );
    throw new AppError(
      'QUERY_FAILED',
      err.kind === 'timeout'
        ? `The statement ${err.message}; make it cheaper (a narrower WHERE, a LIMIT, an index) and run it again.`
        : `The database refused the statement: ${err.message}`,
      { ...(err.sqlState ? { sqlState: err.sqlState } : {}), kind: err.kind },
    );
  }
  throw err;
}

const TLS_OF = (tls: boolean | SourceTls): SourceTls => (tls === true ? 'verify' : tls === false ? 'disable' : tls);

const dialect = (engine: SourceEngine) => engine;

/** What the response says about how the statement was held to reading. */
function readOnlyNote(privileges: SourcePrivileges | undefined) {
  const canWrite = privileges ? privileges.write || privileges.ddl || privileges.superuser || privileges.files : null;
  return {
    transaction: true as const,
    userCanWrite: canWrite,
    note:
      canWrite === false
        ? 'Checked by the SQL parser, then run alone in a READ ONLY transaction with a time limit, as a user that can only read.'
        : canWrite
          ? 'Checked by the SQL parser, then run alone in a READ ONLY transaction with a time limit; the source’s user can also write, which a READ ONLY transaction does not fully stop on every engine: give the source a read-only role (README, "Database sources").'
          : 'Checked by the SQL parser, then run alone in a READ ONLY transaction with a time limit; POST …/test tells whether the source’s user can write.',
  };
}

/**
 * Database sources (docs/architecture.md, "Database sources"): external PostgreSQL and MySQL/MariaDB servers, and
 * managed databases by reference, read through two independent layers: the statement parser (shared/sql-safety)
 * and a single statement in a READ ONLY transaction with limits (shared/database-sources/runner.ts).
 */
export function createSourceService(deps: SourceServiceDeps) {
  const { store, resolver } = deps;
  const limits = (maxRows: number | undefined): QueryLimits => ({
    timeoutMs: deps.limits.timeoutMs,
    maxBytes: deps.limits.maxBytes,
    maxRows: Math.min(maxRows ?? 100, deps.limits.maxRows),
  });

  async function get(principal: Principal, id: string): Promise<DatabaseSourceRecord> {
    const s = await store.get(principal.org._id, id);
    if (!s) throw sourceNotFound(id);
    return s;
  }

  async function checkHost(host: string, port: number) {
    const refusal = await resolver.hostRefusal(host, port);
    if (refusal) throw new AppError('INVALID_REQUEST', `host refused: ${refusal}.`, { field: 'host' });
  }

  const nameTaken = (name: string) =>
    new AppError('CONFLICT', `A database source named ${name} exists in this organisation; choose another name.`, {
      name,
    });

  async function endpoint(s: DatabaseSourceRecord) {
    try {
      return await resolver.resolve(s);
    } catch (err) {
      return queryFailure(err);
    }
  }

  return {
    get,

    async create(
      principal: Principal,
      body:
        | {
            projectId?: string | undefined;
            name?: string | undefined;
            engine: SourceEngine;
            host: string;
            port: number;
            database: string;
            user: string;
            password: string;
            tls: boolean | SourceTls;
          }
        | { projectId?: string | undefined; name?: string | undefined; databaseId: string },
    ): Promise<DatabaseSourceRecord> {
      const orgId = principal.org._id;
      if (body.projectId && !(await deps.projects.get(orgId, body.projectId)))
        throw new AppError('PROJECT_NOT_FOUND', `No project ${body.projectId} in this organisation.`, {
          projectId: body.projectId,
        });
      const _id = randomUUID();
      const now = new Date();
      const base = {
        _id,
        orgId,
        projectId: body.projectId ?? null,
        lastTest: null,
        createdBy: principal.user._id,
        createdAt: now,
        updatedAt: now,
      };
      let record: DatabaseSourceRecord;
      if ('databaseId' in body) {
        const d = await deps.databases.get(orgId, body.databaseId);
        // A database of another organisation, or of a project other than the source's, is not one to add here.
        if (!d || (d.projectId ?? null) !== (body.projectId ?? d.projectId ?? null))
          throw new AppError(
            'DATABASE_NOT_FOUND',
            `No database ${body.databaseId} ${body.projectId ? 'in that project' : 'here'}; list them with GET /platform/databases.`,
            { databaseId: body.databaseId },
          );
        const engine = SOURCE_ENGINE_OF[d.engine];
        if (!engine)
          throw new AppError(
            'INVALID_REQUEST',
            `Database ${d.name} runs ${d.engine}, which has no SQL to query; add a PostgreSQL or MariaDB database.`,
            { field: 'databaseId' },
          );
        record = {
          ...base,
          projectId: body.projectId ?? d.projectId ?? null,
          name: body.name ?? `db-${d.name}`.slice(0, 63).replace(/-+$/, ''),
          engine,
          databaseId: d._id,
          host: null,
          port: null,
          database: null,
          user: null,
          passwordSealed: null,
          tls: 'disable',
        };
      } else {
        await checkHost(body.host, body.port);
        record = {
          ...base,
          name:
            body.name ??
            `${body.engine}-${body.host.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`
              .slice(0, 63)
              .replace(/^-+|-+$/g, ''),
          engine: body.engine,
          databaseId: null,
          host: body.host,
          port: body.port,
          database: body.database,
          user: body.user,
          passwordSealed: resolver.sealPassword({ _id, orgId }, body.password),
          tls: TLS_OF(body.tls),
        };
      }
      const max = PLAN_POLICIES[principal.org.plan].databaseSources.maxCount * deps.quotaMultiplier;
      await insertWithinPlan({
        lock: deps.lock,
        key: `database-sources:${orgId}`,
        what: 'database source quota',
        over: async () => {
          const count = await store.count(orgId);
          if (count + 1 <= max) return undefined;
          return new AppError(
            'QUOTA_EXCEEDED',
            `The ${principal.org.plan} plan allows ${max} database sources; this organisation has ${count}: delete one first.`,
            { maxCount: max, count },
          );
        },
        insert: () => store.insert(record),
        taken: () => nameTaken(record.name),
      });
      return record;
    },

    async list(principal: Principal, q: { projectId?: string | undefined; limit: number; offset: number }) {
      return listVisible(deps.authz, principal, q, (filter) => store.list(principal.org._id, filter));
    },

    async update(
      principal: Principal,
      id: string,
      change: {
        name?: string | undefined;
        host?: string | undefined;
        port?: number | undefined;
        database?: string | undefined;
        user?: string | undefined;
        password?: string | undefined;
        tls?: boolean | SourceTls | undefined;
      },
    ): Promise<DatabaseSourceRecord> {
      const s = await get(principal, id);
      const { name, ...connection } = change;
      if (s.databaseId && Object.values(connection).some((v) => v !== undefined))
        throw new AppError(
          'INVALID_REQUEST',
          'This source is a managed database by reference: its address and credentials are the database’s own; only name can change.',
          { field: Object.keys(connection).find((k) => connection[k as keyof typeof connection] !== undefined) },
        );
      if (change.host !== undefined || change.port !== undefined)
        await checkHost(change.host ?? s.host ?? '', change.port ?? s.port ?? 0);
      const set: Partial<DatabaseSourceRecord> = {};
      if (name !== undefined) set.name = name;
      if (change.host !== undefined) set.host = change.host;
      if (change.port !== undefined) set.port = change.port;
      if (change.database !== undefined) set.database = change.database;
      if (change.user !== undefined) set.user = change.user;
      if (change.tls !== undefined) set.tls = TLS_OF(change.tls);
      if (change.password !== undefined) set.passwordSealed = resolver.sealPassword(s, change.password);
      // What a test found no longer holds for another server or user.
      if (Object.keys(set).some((k) => k !== 'name')) set.lastTest = null;
      try {
        if (!(await store.update(s.orgId, id, set))) throw sourceNotFound(id);
      } catch (err) {
        if (isDuplicateKey(err)) throw nameTaken(name ?? '');
        throw err;
      }
      return (await store.get(s.orgId, id)) ?? { ...s, ...set };
    },

    async remove(principal: Principal, id: string): Promise<void> {
      const s = await get(principal, id);
      if (!(await store.remove(s.orgId, id))) throw sourceNotFound(id);
    },

    /** Connects and reports the server's version and what the user may do beyond reading; kept as the last test. */
    async test(principal: Principal, id: string) {
      const s = await get(principal, id);
      let outcome;
      try {
        const probe = await probeSource(await resolver.resolve(s), deps.limits.timeoutMs);
        const p = probe.privileges;
        const warnings = [
          ...(p.superuser ? ['The user is a superuser: it may do anything on the server.'] : []),
          ...(p.files ? ['The user may read or write the server’s files (or run programs there).'] : []),
          ...(p.write ? ['The user may insert, update or delete rows.'] : []),
          ...(p.ddl ? ['The user may create, alter or drop objects.'] : []),
        ];
        if (warnings.length)
          warnings.push(
            'Queries are checked and run read-only, but a READ ONLY transaction alone does not stop everything such a user can do; give the source a read-only role (README, "Database sources").',
          );
        outcome = {
          ok: true,
          serverVersion: probe.serverVersion,
          privileges: p,
          readOnlyUser: !(p.write || p.ddl || p.superuser || p.files),
          warnings,
        };
        await store.setLastTest(s.orgId, id, {
          at: new Date(),
          ok: true,
          serverVersion: probe.serverVersion,
          privileges: p,
        });
      } catch (err) {
        if (!(err instanceof SourceQueryError) && !(err instanceof SourceTargetError)) throw err;
        outcome = { ok: false, warnings: [], error: err.message };
        await store.setLastTest(s.orgId, id, { at: new Date(), ok: false, error: err.message });
      }
      return outcome;
    },

    async schema(principal: Principal, id: string) {
      const s = await get(principal, id);
      const ep = await endpoint(s);
      try {
        return { engine: s.engine, ...(await describeSource(ep, deps.limits.timeoutMs)) };
      } catch (err) {
        return queryFailure(err);
      }
    },

    /** One read-only statement through both layers: the parser refuses first, and then nothing reaches the database. */
    async query(
      principal: Principal,
      id: string,
      body: { sql: string; params?: (string | number | boolean | null)[] | undefined; maxRows?: number | undefined },
    ): Promise<QueryResult & { statement: { kind: 'select' | 'explain' }; readOnly: ReturnType<typeof readOnlyNote> }> {
      const s = await get(principal, id);
      const verdict = await checkStatement(dialect(s.engine), body.sql);
      if (!verdict.ok) throw blocked(verdict);
      const ep = await endpoint(s);
      let result: QueryResult;
      try {
        result = await runReadOnly(ep, body.sql, body.params ?? [], limits(body.maxRows));
      } catch (err) {
        return queryFailure(err);
      }
      return { ...result, statement: { kind: verdict.kind }, readOnly: readOnlyNote(s.lastTest?.privileges) };
    },

    /**
     * Records the question and starts its answer (the model writes SQL from the schema, the SQL passes both layers);
     * waits up to the ask wait for it. Answers the question's record, running when the wait ran out.
     */
    async ask(
      principal: Principal,
      id: string,
      body: { question: string; providerId?: string | undefined; model?: string | undefined },
    ): Promise<SourceQuestionRecord> {
      const s = await get(principal, id);
      const orgId = principal.org._id;
      const provider = body.providerId
        ? await deps.aiProviders.get(orgId, body.providerId)
        : (await deps.aiProviders.list(orgId, { enabledOnly: true }))[0];
      if (!provider)
        throw body.providerId
          ? new AppError(
              'AI_PROVIDER_NOT_FOUND',
              `No AI provider ${body.providerId} here; list them with GET /platform/ai-providers.`,
              { providerId: body.providerId },
            )
          : new AppError(
              'INVALID_REQUEST',
              'This organisation has no enabled AI provider to write the SQL; add one with POST /platform/ai-providers, or run SQL yourself with POST …/query.',
              { field: 'providerId' },
            );
      if (!provider.enabled)
        throw new AppError('INVALID_REQUEST', `AI provider ${provider.name} is disabled; enable it or name another.`, {
          field: 'providerId',
        });
      const model = body.model ?? provider.defaultModel;
      if (provider.models?.length && !provider.models.includes(model))
        throw new AppError(
          'INVALID_REQUEST',
          `AI provider ${provider.name} does not offer the model ${model}; choose one of: ${provider.models.join(', ')}.`,
          { field: 'model' },
        );
      const question: SourceQuestionRecord = {
        _id: randomUUID(),
        orgId,
        sourceId: s._id,
        question: body.question,
        providerId: provider._id,
        model,
        status: 'running',
        sql: null,
        explanation: null,
        rule: null,
        error: null,
        resultJson: null,
        askedBy: principal.user._id,
        askedAt: new Date(),
        answeredAt: null,
      };
      await store.insertQuestion(question);
      const input: SourceQuestionInput = { questionId: question._id, orgId, sourceId: s._id };
      const handle = await deps.temporal.workflow.start(SOURCE_QUESTION_WORKFLOW, {
        taskQueue: deps.taskQueue,
        workflowId: sourceQuestionWorkflowId(question._id),
        args: [input],
        ...sourceQuestionVisibility({ orgId, projectId: s.projectId, sourceName: s.name }),
      });
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        handle.result().then(
          (r: SourceQuestionOutcome) => r,
          (err: unknown) => {
            if (err instanceof WorkflowFailedError) return undefined;
            throw err;
          },
        ),
        new Promise<'wait-over'>((resolve) => (timer = setTimeout(() => resolve('wait-over'), deps.askWaitMs))),
      ]).finally(() => clearTimeout(timer));
      const now = (await store.getQuestion(orgId, s._id, question._id)) ?? question;
      if (waited !== 'wait-over' && now.status === 'blocked')
        throw new AppError(
          'STATEMENT_BLOCKED',
          `blocked by a safety check (rule ${now.rule}): the SQL the model wrote was refused (${now.error ?? now.rule}). Nothing was sent to the database; ask again in other words, or write the SQL with POST …/query.`,
          { rule: now.rule, sql: now.sql, questionId: now._id },
        );
      return now;
    },

    async questions(principal: Principal, id: string, q: { limit: number; offset: number }) {
      const s = await get(principal, id);
      return store.listQuestions(s.orgId, s._id, q);
    },

    async question(principal: Principal, id: string, questionId: string) {
      const s = await get(principal, id);
      const q = await store.getQuestion(s.orgId, s._id, questionId);
      if (!q)
        throw new AppError(
          'QUESTION_NOT_FOUND',
          `No question ${questionId} of this source; list them with GET /platform/database-sources/${id}/questions.`,
          { questionId },
        );
      return q;
    },
  };
}

export type SourceService = ReturnType<typeof createSourceService>;
