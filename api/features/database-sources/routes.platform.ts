import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { sourceProject } from './access';
import type { SourcesContext } from './compose';
import {
  AskRequest,
  CreateSourceRequest,
  DatabaseSource,
  PageQuery,
  QueryRequest,
  QueryResult,
  Question,
  QuestionList,
  QuestionParams,
  SourceIdParams,
  SourceList,
  SourceListQuery,
  SourceSchema,
  SourceTestResult,
  UpdateSourceRequest,
} from './schemas';
import { questionView, sourceView } from './views';

export const SAFETY_TEXT =
  'Two independent layers: a parser of the source’s dialect (PostgreSQL’s own, node-sql-parser for MySQL/MariaDB) allows exactly one SELECT, WITH … SELECT or EXPLAIN without ANALYZE, and refuses writes anywhere (data-modifying CTEs too), SELECT … INTO, locking clauses, COPY, SET, transaction control, functions with side effects or file and network access, MySQL executable comments and several statements: 400 STATEMENT_BLOCKED, "blocked by a safety check", naming the rule (details.rule), and nothing reaches the database. What passes runs alone (one statement per protocol message) in a READ ONLY transaction with a statement time limit, a row cap and a byte cap, on a connection of its own. A READ ONLY transaction does not stop everything a user with write privileges can do: POST …/test reports them, and the README shows how to give a source a read-only role.';

/** External database sources and managed databases added as sources; their schema, queries and questions. */
export function sourceRoutes(ctx: Pick<SourcesContext, 'sources' | 'can' | 'config'>): RouteDef[] {
  const { sources, can } = ctx;
  const tags = ['Database sources'];
  const ofSource = sourceProject(sources);
  return [
    route({
      method: 'post',
      path: '/database-sources',
      summary:
        'Add a database source: an external PostgreSQL or MySQL/MariaDB server, or a managed database by reference',
      description:
        'The password is write-only (sealed at rest, never shown). The host is resolved and refused when it is loopback, private or link-local (unless the operator allows private networks; cloud metadata never), and the checked address is the one every query connects to. A managed PostgreSQL or MariaDB database of the organisation is added with {databaseId}: its own address and credentials are used.',
      tags,
      request: { body: CreateSourceRequest },
      before: [
        can('database_source.manage', {
          project: (req) => (req.body as { projectId?: unknown } | undefined)?.projectId as string | undefined,
        }),
      ],
      responses: {
        201: { description: 'The source', schema: success(DatabaseSource) },
        404: { description: 'PROJECT_NOT_FOUND or DATABASE_NOT_FOUND' },
        409: { description: 'CONFLICT: a source of that name exists' },
        429: { description: 'QUOTA_EXCEEDED: the plan’s number of sources' },
      },
      audit: { idField: 'id' },
      handler: async ({ body }, req, res) => {
        res.status(201).json(ok(sourceView(await sources.create(principalOf(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/database-sources',
      summary: 'List database sources of the organisation and of the projects you can see',
      tags,
      request: { query: SourceListQuery },
      before: [can('database_source.read')],
      responses: { 200: { description: 'A page of sources', schema: success(SourceList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await sources.list(principalOf(req), query);
        res.json(ok({ sources: items.map(sourceView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/database-sources/:id',
      summary: 'A database source (never its password) and what its last test found',
      tags,
      request: { params: SourceIdParams },
      before: [can('database_source.read', ofSource)],
      responses: {
        200: { description: 'The source', schema: success(DatabaseSource) },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(sourceView(await sources.get(principalOf(req), params.id))));
      },
    }),
    route({
      method: 'patch',
      path: '/database-sources/:id',
      summary: 'Change a source’s name, address, credentials or TLS mode',
      description:
        'Fields given replace the stored ones (the password is write-only). A new host is checked as at creation. A change of server or user clears the last test. A managed database by reference only changes its name.',
      tags,
      request: { params: SourceIdParams, body: UpdateSourceRequest },
      before: [can('database_source.manage', ofSource)],
      responses: {
        200: { description: 'The source after the change', schema: success(DatabaseSource) },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND' },
        409: { description: 'CONFLICT: a source of that name exists' },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(sourceView(await sources.update(principalOf(req), params.id, body))));
      },
    }),
    route({
      method: 'delete',
      path: '/database-sources/:id',
      summary: 'Remove a source and the questions asked of it (the database itself is not touched)',
      tags,
      request: { params: SourceIdParams },
      before: [can('database_source.manage', ofSource)],
      responses: { 204: { description: 'Removed' }, 404: { description: 'DATABASE_SOURCE_NOT_FOUND' } },
      handler: async ({ params }, req, res) => {
        await sources.remove(principalOf(req), params.id);
        res.status(204).end();
      },
    }),
    route({
      method: 'post',
      path: '/database-sources/:id/test',
      summary: 'Connect, and report the server version and what the source’s user may do beyond reading',
      description:
        'ok false with error when the server cannot be reached or refuses the login. privileges: write (insert, update, delete), ddl (create, alter, drop), superuser, files (server files or programs); warnings say what a READ ONLY transaction would not stop for such a user. The outcome is kept as the source’s lastTest.',
      tags,
      request: { params: SourceIdParams },
      before: [can('database_source.manage', ofSource)],
      responses: {
        200: { description: 'What the test found', schema: success(SourceTestResult) },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(await sources.test(principalOf(req), params.id)));
      },
    }),
    route({
      method: 'get',
      path: '/database-sources/:id/schema',
      summary: 'The source’s schemas, tables and views, columns and types, keys and row estimates',
      description:
        'Read in a READ ONLY transaction from the catalogue; at most 300 tables (truncated says when more exist).',
      tags,
      request: { params: SourceIdParams },
      before: [can('database_source.read', ofSource)],
      responses: {
        200: { description: 'The schema', schema: success(SourceSchema) },
        400: { description: 'SOURCE_UNREACHABLE or QUERY_FAILED' },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND' },
      },
      audit: { action: 'database-source.schema', resource: 'database-source' },
      handler: async ({ params }, req, res) => {
        res.json(ok(await sources.schema(principalOf(req), params.id)));
      },
    }),
    route({
      method: 'post',
      path: '/database-sources/:id/query',
      summary: 'Run one read-only statement: columns, rows, truncated and timing',
      description: SAFETY_TEXT,
      tags,
      request: { params: SourceIdParams, body: QueryRequest },
      before: [can('database_source.query', ofSource)],
      responses: {
        200: { description: 'The answer', schema: success(QueryResult) },
        400: {
          description:
            'STATEMENT_BLOCKED (blocked by a safety check; details.rule), QUERY_FAILED (the database refused or cancelled it) or SOURCE_UNREACHABLE',
        },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND' },
      },
      handler: async ({ params, body }, req, res) => {
        res.json(ok(await sources.query(principalOf(req), params.id, body)));
      },
    }),
    route({
      method: 'post',
      path: '/database-sources/:id/ask',
      summary:
        'Ask a question: the organisation’s AI provider writes SQL from the schema, which runs through the same checks',
      description: `The answer carries the SQL, the rows and a one-line explanation, and is kept in the source's questions. SQL the model wrote that the safety check refuses is 400 STATEMENT_BLOCKED (kept as a blocked question). ${SAFETY_TEXT}`,
      tags,
      request: { params: SourceIdParams, body: AskRequest },
      before: [can('database_source.query', ofSource)],
      responses: {
        200: { description: 'The answered (or failed) question', schema: success(Question) },
        202: {
          description:
            'Not answered within SOURCE_ASK_WAIT_S (120 s): it goes on; read it at GET …/questions/{questionId}',
          schema: success(Question),
        },
        400: { description: 'STATEMENT_BLOCKED, or no enabled AI provider' },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND or AI_PROVIDER_NOT_FOUND' },
      },
      audit: { idField: 'id', resource: 'database-source', action: 'database-source.ask' },
      handler: async ({ params, body }, req, res) => {
        const q = await sources.ask(principalOf(req), params.id, body);
        res.status(q.status === 'running' ? 202 : 200).json(ok(questionView(q)));
      },
    }),
    route({
      method: 'get',
      path: '/database-sources/:id/questions',
      summary: 'The questions asked of a source and their answers, newest first',
      tags,
      request: { params: SourceIdParams, query: PageQuery },
      before: [can('database_source.read', ofSource)],
      responses: {
        200: { description: 'A page of questions', schema: success(QuestionList) },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND' },
      },
      handler: async ({ params, query }, req, res) => {
        const { items, total } = await sources.questions(principalOf(req), params.id, query);
        res.json(ok({ questions: items.map(questionView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/database-sources/:id/questions/:questionId',
      summary: 'One question and its answer',
      tags,
      request: { params: QuestionParams },
      before: [can('database_source.read', ofSource)],
      responses: {
        200: { description: 'The question', schema: success(Question) },
        404: { description: 'DATABASE_SOURCE_NOT_FOUND or QUESTION_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(questionView(await sources.question(principalOf(req), params.id, params.questionId))));
      },
    }),
  ];
}
