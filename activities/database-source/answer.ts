import { type AiClient, AiProviderError, collectAnswer, type ToolSpec } from '@shared/ai';
import type { AiProviders } from '@shared/ai-providers/providers';
import type { SourceQuestionInput, SourceQuestionOutcome } from '@shared/contracts/database-source';
import { type QueryLimits, schemaPrompt, SourceQueryError } from '@shared/database-sources/endpoint';
import { type EndpointResolver, SourceTargetError } from '@shared/database-sources/resolve';
import { describeSource, runReadOnly } from '@shared/database-sources/runner';
import type { SourceStore } from '@shared/database-sources/store';
import type { SourceEngine, SourceQuestionRecord } from '@shared/database-sources/types';
import { checkStatement } from '@shared/sql-safety';

/** The tool the model answers through: a structured answer rather than SQL fished out of prose. */
const ANSWER_TOOL: ToolSpec = {
  name: 'answer_with_sql',
  description: 'Give the one read-only SQL statement that answers the question, and one line saying what it does.',
  parameters: {
    type: 'object',
    properties: {
      sql: { type: 'string', description: 'Exactly one SELECT (or WITH … SELECT) statement, no trailing semicolon' },
      explanation: { type: 'string', description: 'One line, in plain words, on what the statement returns' },
    },
    required: ['sql', 'explanation'],
    additionalProperties: false,
  },
};

const DIALECT: Record<SourceEngine, string> = { postgres: 'PostgreSQL', mysql: 'MySQL/MariaDB' };

const SYSTEM = (engine: SourceEngine) =>
  `You answer questions about a ${DIALECT[engine]} database by writing exactly one read-only SQL statement (SELECT or WITH … SELECT) in its dialect, using only the tables and columns listed. Never write anything that changes data or settings. Add a LIMIT of at most 100 unless the question asks for an aggregate. Answer by calling ${ANSWER_TOOL.name} once.`;

/** The SQL and explanation from a tool call, or from JSON or a fenced block in the text when the model wrote one. */
export function extractAnswer(answer: {
  text: string;
  toolCalls: { name: string; arguments: Record<string, unknown> }[];
}): { sql: string; explanation: string } | undefined {
  const call = answer.toolCalls.find((c) => c.name === ANSWER_TOOL.name);
  if (call && typeof call.arguments.sql === 'string')
    return { sql: call.arguments.sql, explanation: String(call.arguments.explanation ?? '') };
  const fenced = /```(?:sql)?\s*([\s\S]*?)```/i.exec(answer.text);
  if (fenced?.[1]?.trim()) return { sql: fenced[1].trim(), explanation: answer.text.replace(fenced[0], '').trim() };
  try {
    const parsed = JSON.parse(answer.text) as { sql?: unknown; explanation?: unknown };
    if (typeof parsed.sql === 'string') return { sql: parsed.sql, explanation: String(parsed.explanation ?? '') };
  } catch {
    // Not JSON: no SQL to take.
  }
  return undefined;
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 300);

/**
 * Answers one question (docs/architecture.md, "Database sources"): reads the source's schema, has the organisation's
 * model write SQL through a tool, puts that SQL through the same two layers as any query, and writes the outcome once.
 * The model's SQL is as untrusted as a caller's: a statement the parser refuses is recorded as blocked, never run.
 */
export function createSourceQuestionActivities(deps: {
  store: Pick<SourceStore, 'getQuestionAny' | 'get' | 'completeQuestion'>;
  resolver: Pick<EndpointResolver, 'resolve'>;
  aiProviders: Pick<AiProviders, 'credentials'>;
  ai: Pick<AiClient, 'streamChat'>;
  limits: QueryLimits;
}) {
  const complete = async (
    q: SourceQuestionRecord,
    set: Partial<SourceQuestionRecord>,
  ): Promise<SourceQuestionOutcome> => {
    await deps.store.completeQuestion(q._id, { ...set, answeredAt: new Date() });
    return { status: set.status as SourceQuestionOutcome['status'] };
  };

  return {
    async answerQuestion(input: SourceQuestionInput): Promise<SourceQuestionOutcome> {
      const q = await deps.store.getQuestionAny(input.questionId);
      if (!q || q.orgId !== input.orgId) return { status: 'failed' };
      // Answered by an earlier attempt: the record is written once.
      if (q.status !== 'running') return { status: q.status };
      const source = await deps.store.get(input.orgId, input.sourceId);
      if (!source)
        return complete(q, { status: 'failed', error: 'the source was removed before the question was answered' });
      const creds = await deps.aiProviders.credentials(input.orgId, q.providerId);
      if (!creds?.enabled)
        return complete(q, {
          status: 'failed',
          error: 'the AI provider was removed or disabled; ask again with another',
        });
      let sql: string | undefined;
      let explanation: string | null = null;
      try {
        const ep = await deps.resolver.resolve(source);
        const schema = await describeSource(ep, deps.limits.timeoutMs);
        const answer = await collectAnswer(
          deps.ai.streamChat({
            kind: creds.kind,
            baseUrl: creds.baseUrl,
            apiKey: creds.apiKey,
            model: q.model,
            system: SYSTEM(source.engine),
            messages: [
              {
                role: 'user',
                content: `Tables of the database:\n${schemaPrompt(schema)}\n\nQuestion: ${q.question}`,
              },
            ],
            tools: [ANSWER_TOOL],
            maxTokens: 2000,
          }),
        );
        const got = extractAnswer(answer);
        if (!got)
          return complete(q, { status: 'failed', error: 'the model answered without SQL; ask again in other words' });
        sql = got.sql.trim();
        explanation = oneLine(got.explanation) || null;
        const verdict = await checkStatement(source.engine, sql);
        if (!verdict.ok)
          return complete(q, { status: 'blocked', sql, explanation, rule: verdict.rule, error: verdict.message });
        const result = await runReadOnly(ep, sql, [], deps.limits);
        return complete(q, { status: 'answered', sql, explanation, resultJson: JSON.stringify(result) });
      } catch (err) {
        if (err instanceof SourceQueryError || err instanceof SourceTargetError || err instanceof AiProviderError)
          return complete(q, { status: 'failed', sql: sql ?? null, explanation, error: err.message });
        throw err;
      }
    },

    /** The question's end when its answer could not run at all (the worker died under it past its retries). */
    async failQuestion(questionId: string, error: string): Promise<void> {
      const q = await deps.store.getQuestionAny(questionId);
      if (q?.status === 'running')
        await deps.store.completeQuestion(questionId, { status: 'failed', error, answeredAt: new Date() });
    },
  };
}

export type SourceQuestionActivities = ReturnType<typeof createSourceQuestionActivities>;
