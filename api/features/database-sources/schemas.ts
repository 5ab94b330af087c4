import { z } from 'zod';

import { QUESTION_STATUSES, SOURCE_ENGINES, SOURCE_TLS_MODES } from '@shared/database-sources/types';

import { queryInt, text } from '../../http/fields';

/**
 * A DNS name or an IPv4 address (both fit the first pattern), or an IPv6 address (hex groups and colons). One string
 * with one pattern, so the document states the whole rule; a malformed IPv6 text does not resolve and is refused then.
 */
const host = z
  .string()
  .min(1)
  .max(253)
  .regex(
    /^([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|[0-9A-Fa-f]{0,4}(:[0-9A-Fa-f]{0,4}){2,7})$/,
    'a host name (letters, digits, "-" and ".") or an IP address',
  )
  .meta({
    description:
      'The server’s host name or address. Loopback, private and link-local addresses are refused unless the operator allows private networks; cloud metadata addresses always are',
  });

/** No NUL: neither protocol carries one in a name, and a driver would cut the text there. */
const plain = (min: number, max: number, what: string) =>
  z
    .string()
    .min(min)
    .max(max)
    // eslint-disable-next-line no-control-regex -- the NUL is what is refused
    .regex(/^[^\u0000]*$/, `${what} cannot hold a NUL character`);

const tls = z.union([z.boolean(), z.enum(SOURCE_TLS_MODES)]).meta({
  description:
    'verify (or true): TLS with the certificate checked against host; require: TLS without checking the certificate; disable (or false): no TLS',
});

const projectId = z
  .uuid('a project ID in UUID format')
  .optional()
  .meta({ description: 'The project it belongs to; judged by your role there. The organisation’s when absent' });

const name = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'lowercase letters, digits and "-", at most 63 characters')
  .meta({ description: 'Unique in the organisation; generated from the engine and host when absent' });

export const CreateExternalSourceRequest = z
  .object({
    projectId,
    name: name.optional(),
    engine: z.enum(SOURCE_ENGINES).meta({ description: 'postgres, or mysql for MySQL and MariaDB' }),
    host,
    port: z.number().int().min(1).max(65535),
    database: plain(1, 64, 'database'),
    user: plain(1, 80, 'user'),
    password: plain(0, 1024, 'password').meta({
      description: 'Write-only: sealed at rest, never shown again. Give the source a read-only role (see the README)',
    }),
    tls: tls.optional().default('verify'),
  })
  .strict()
  .meta({ id: 'CreateExternalDatabaseSourceRequest' });

export const CreateManagedSourceRequest = z
  .object({
    projectId,
    name: name.optional(),
    databaseId: z.uuid('a database ID in UUID format').meta({
      description:
        'A managed PostgreSQL or MariaDB database of this organisation (and of projectId, when given), added by reference: its own address and credentials are used',
    }),
  })
  .strict()
  .meta({ id: 'CreateManagedDatabaseSourceRequest' });

export const CreateSourceRequest = z
  .union([CreateExternalSourceRequest, CreateManagedSourceRequest])
  .meta({ id: 'CreateDatabaseSourceRequest' });

export const UpdateSourceRequest = z
  .object({
    name: name.optional(),
    host: host.optional(),
    port: z.number().int().min(1).max(65535).optional(),
    database: plain(1, 64, 'database').optional(),
    user: plain(1, 80, 'user').optional(),
    password: plain(0, 1024, 'password').optional().meta({ description: 'Write-only; replaces the sealed one' }),
    tls: tls.optional(),
  })
  .strict()
  .meta({ id: 'UpdateDatabaseSourceRequest' });

export const SourceIdParams = z.object({ id: z.uuid('a database source ID in UUID format') });
export const QuestionParams = z.object({
  id: z.uuid('a database source ID in UUID format'),
  questionId: z.uuid('a question ID in UUID format'),
});

export const SourceListQuery = z
  .object({
    projectId: z.uuid('a project ID in UUID format').optional(),
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, 1_000_000).default(0),
  })
  .strict();

export const PageQuery = z
  .object({ limit: queryInt(1, 100).default(20), offset: queryInt(0, 1_000_000).default(0) })
  .strict();

const Privileges = z
  .object({
    write: z.boolean().meta({ description: 'May insert, update or delete in some table' }),
    ddl: z.boolean().meta({ description: 'May create, alter or drop objects' }),
    superuser: z.boolean(),
    files: z.boolean().meta({ description: 'May read or write the server’s files or run programs there' }),
  })
  .meta({ id: 'DatabaseSourcePrivileges' });

export const DatabaseSource = z
  .object({
    id: z.uuid(),
    name: z.string(),
    projectId: z.string().nullable(),
    engine: z.enum(SOURCE_ENGINES),
    databaseId: z.string().nullable().meta({ description: 'The managed database it refers to, if it is one' }),
    host: z.string().nullable(),
    port: z.number().int().nullable(),
    database: z.string().nullable(),
    user: z.string().nullable(),
    tls: z.enum(SOURCE_TLS_MODES),
    passwordSet: z.boolean(),
    lastTest: z
      .object({
        at: z.iso.datetime(),
        ok: z.boolean(),
        serverVersion: z.string().optional(),
        privileges: Privileges.optional(),
        error: z.string().optional(),
      })
      .nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'DatabaseSource' });

export const SourceList = z
  .object({
    sources: z.array(DatabaseSource),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'DatabaseSourceList' });

export const SourceTestResult = z
  .object({
    ok: z.boolean(),
    serverVersion: z.string().optional(),
    privileges: Privileges.optional(),
    readOnlyUser: z.boolean().optional().meta({
      description: 'True when the user may do nothing but read: the strongest setup (see the README for the role)',
    }),
    warnings: z.array(z.string()),
    error: z.string().optional().meta({ description: 'Why the test failed, when it did' }),
  })
  .meta({ id: 'DatabaseSourceTestResult' });

const Table = z.object({
  name: z.string(),
  kind: z.enum(['table', 'view', 'materialized_view', 'foreign_table', 'partitioned_table']),
  rowEstimate: z.number().nullable().meta({ description: 'The planner’s estimate; null when it has none' }),
  columns: z.array(
    z.object({ name: z.string(), type: z.string(), nullable: z.boolean(), default: z.string().nullable() }),
  ),
  primaryKey: z.array(z.string()),
  foreignKeys: z.array(
    z.object({
      name: z.string(),
      columns: z.array(z.string()),
      references: z.object({ schema: z.string(), table: z.string(), columns: z.array(z.string()) }),
    }),
  ),
});

export const SourceSchema = z
  .object({
    engine: z.enum(SOURCE_ENGINES),
    schemas: z.array(z.object({ name: z.string(), tables: z.array(Table) })),
    truncated: z.boolean().meta({ description: 'More tables exist than the description carries (300)' }),
  })
  .meta({ id: 'DatabaseSourceSchema' });

const param = z.union([z.string().max(10_000), z.number(), z.boolean(), z.null()]);

export const QueryRequest = z
  .object({
    sql: z.string().min(1).max(100_000).meta({
      description:
        'One read-only statement in the source’s dialect: SELECT, WITH … SELECT, or EXPLAIN without ANALYZE. Anything else is refused by the safety check before it reaches the database',
    }),
    params: z
      .array(param)
      .max(100)
      .optional()
      .meta({ description: 'Values for $1, $2… (postgres) or ? (mysql), sent apart from the statement' }),
    maxRows: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .optional()
      .meta({ description: 'At most this many rows (default 100; the server’s SOURCE_QUERY_MAX_ROWS bounds it)' }),
  })
  .strict()
  .meta({ id: 'DatabaseSourceQueryRequest' });

const Column = z.object({ name: z.string(), type: z.string() });

export const QueryResult = z
  .object({
    columns: z.array(Column),
    rows: z.array(z.array(z.unknown())).meta({
      description:
        'Each row’s values in the columns’ order; big integers, decimals and dates as text, bytes as \\x hex. Data from the database: untrusted text',
    }),
    rowCount: z.number().int(),
    truncated: z.boolean(),
    truncatedBy: z.enum(['rows', 'bytes']).nullable(),
    timing: z.object({ connectMs: z.number(), queryMs: z.number(), totalMs: z.number() }),
    statement: z.object({ kind: z.enum(['select', 'explain']) }),
    readOnly: z
      .object({
        transaction: z.literal(true),
        userCanWrite: z.boolean().nullable().meta({
          description: 'What the last test found; null before any test. True means the role itself is not read-only',
        }),
        note: z.string(),
      })
      .meta({ description: 'How the statement was held to reading' }),
  })
  .meta({ id: 'DatabaseSourceQueryResult' });

export const AskRequest = z
  .object({
    question: text(2000).meta({ description: 'A question about the data, in plain words' }),
    providerId: z.uuid('an AI provider ID in UUID format').optional().meta({
      description: 'The AI provider that writes the SQL; the organisation’s first enabled one when absent',
    }),
    model: z.string().min(1).max(200).optional().meta({ description: 'The provider’s default model when absent' }),
  })
  .strict()
  .meta({ id: 'DatabaseSourceAskRequest' });

export const Question = z
  .object({
    id: z.uuid(),
    sourceId: z.uuid(),
    question: z.string(),
    status: z.enum(QUESTION_STATUSES).meta({
      description:
        'running: the model is writing or the statement running; answered; blocked: the SQL the model wrote was refused by the safety check (rule); failed: see error',
    }),
    sql: z.string().nullable(),
    explanation: z.string().nullable().meta({ description: 'One line from the model on what the SQL does' }),
    rule: z.string().nullable(),
    error: z.string().nullable(),
    result: QueryResult.omit({ statement: true, readOnly: true }).nullable(),
    providerId: z.string(),
    model: z.string(),
    askedAt: z.iso.datetime(),
    answeredAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'DatabaseSourceQuestion' });

export const QuestionList = z
  .object({ questions: z.array(Question), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'DatabaseSourceQuestionList' });
