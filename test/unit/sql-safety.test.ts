import { parse } from 'libpg-query';

import { checkStatement, SAFETY_RULES, type SafetyRule, type SqlDialect } from '@shared/sql-safety';
import * as mysqlCorpus from '@test/fixtures/sql-safety/mysql';
import * as postgresCorpus from '@test/fixtures/sql-safety/postgres';

async function ruleOf(dialect: SqlDialect, sql: string): Promise<SafetyRule | 'ok'> {
  const verdict = await checkStatement(dialect, sql);
  return verdict.ok ? 'ok' : verdict.rule;
}

describe('PostgreSQL statements, focused cases', () => {
  it.each([
    ['select pg_catalog.pg_sleep(1)', 'forbidden-function'],
    ['select "pg_sleep"(1)', 'forbidden-function'],
    ['select PG_CATALOG."PG_SLEEP"(1)', 'forbidden-function'],
    ['select "pg_catalog"."set_config"(\'work_mem\', \'1GB\', false)', 'forbidden-function'],
    ['select coalesce((select max(x) from (select pg_advisory_lock(1) as x) s), 0)', 'forbidden-function'],
    ["select upper(concat('a', (select dblink_exec('host=x', 'drop table t'))))", 'forbidden-function'],
    ["select * from customers c, lateral (select lo_export(1, '/tmp/x')) l", 'forbidden-function'],
    ["select * from customers c cross join lateral pg_ls_dir('.') f", 'forbidden-function'],
    ["select case when true then ts_stat('select 1') end", 'forbidden-function'],
    ['select 1 union all select pg_sleep(1)', 'forbidden-function'],
    [
      'with a as (with b as (update customers set name = name returning id) select * from b) select * from a',
      'data-modifying-cte',
    ],
    ['select * from (select * from customers for update) s', 'locking-clause'],
    ['explain (analyze true) select 1', 'explain-analyze'],
    ['explain (analyze false) select 1', 'explain-analyze'],
    ['explain (ANALYSE, buffers) select 1', 'explain-analyze'],
    ['explain (format json) select pg_sleep(1)', 'forbidden-function'],
    ['explain create table x as select 1', 'not-read-only'],
    ['select 1; select 2', 'multiple-statements'],
    [' -- only a comment\n ; ', 'empty'],
    ['', 'empty'],
    ['selec 1', 'parse-error'],
  ] as const)('%s → %s', async (sql, rule) => {
    expect(await ruleOf('postgres', sql)).toBe(rule);
  });

  it.each([
    "select 'delete from customers; drop table orders' as s",
    'select 1 as "pg_sleep", \'/*!\' as "/*!"',
    "select c.name from customers c where c.name <> 'pg_sleep(1)'",
    'select $$ ; commit; $$ as body',
    'values (1), (2)',
    'select 1;',
    'explain (format json, costs false) select * from customers',
  ])('allows %s', async (sql) => {
    expect(await checkStatement('postgres', sql)).toMatchObject({ ok: true });
  });

  it('says which kind was allowed and names the offending function', async () => {
    expect(await checkStatement('postgres', 'explain select 1')).toEqual({ ok: true, kind: 'explain' });
    expect(await checkStatement('postgres', 'select pg_catalog.PG_SLEEP(1)')).toMatchObject({
      ok: false,
      message: expect.stringContaining('pg_sleep()'),
    });
  });
});

describe('MySQL/MariaDB statements, focused cases', () => {
  it.each([
    ['select `SLEEP`(1)', 'forbidden-function'],
    ['select mydb.sleep(1)', 'forbidden-function'],
    [
      'select * from customers where id in (select id from customers where benchmark(1000000, md5(1)) = 0)',
      'forbidden-function',
    ],
    ["select * from customers c, lateral (select get_lock('x', 1)) l", 'forbidden-function'],
    ['select 1 /*!50000 , sleep(1) */', 'executable-comment'],
    ['select 1 /*M!100000 , sleep(1) */', 'executable-comment'],
    ['select /*+ MAX_EXECUTION_TIME(100000000) */ 1', 'executable-comment'],
    ['select 5--1', 'ambiguous-syntax'],
    ["select 'it\\'s'", 'ambiguous-syntax'],
    ['select (select @a := 1)', 'user-variable'],
    ['select * from customers for update of customers', 'locking-clause'],
    ["select * from customers into dumpfile '/tmp/x'", 'into-outfile'],
    ['explain analyze select 1', 'explain-analyze'],
    ['explain format=tree analyze select 1', 'explain-analyze'],
    ['analyze format=json select 1', 'explain-analyze'],
    ['explain for connection 7', 'not-read-only'],
    ['describe select 1', 'not-read-only'],
    ["select 'a'; select 'b'", 'multiple-statements'],
    ['  # nothing\n;', 'empty'],
    ["select 'unterminated", 'parse-error'],
  ] as const)('%s → %s', async (sql, rule) => {
    expect(await ruleOf('mysql', sql)).toBe(rule);
  });

  it.each([
    "select 'delete from customers; drop table orders' as s",
    "select '/*! sleep(1) */' as `/*!x*/`",
    'select sleep from (select 1 as sleep) t',
    'select \'it\'\'s\', "say ""hi"""',
    'select 1 -- a comment; drop table customers\n',
    'select 1 # another; comment',
    'select 5 - -1',
    'explain format=json select 1',
  ])('allows %s', async (sql) => {
    expect(await checkStatement('mysql', sql)).toMatchObject({ ok: true });
  });
});

describe.each([
  ['postgres', postgresCorpus],
  ['mysql', mysqlCorpus],
] as const)('the %s corpus', (dialect, corpus) => {
  it.each(corpus.REFUSED.map((entry) => [entry.sql, entry.rule] as const))('refuses %s as %s', async (sql, rule) => {
    const verdict = await checkStatement(dialect, sql);
    expect(verdict).toMatchObject({ ok: false, rule });
    expect(verdict.ok ? '' : verdict.message.length).toBeGreaterThan(20);
  });

  it.each(corpus.ALLOWED.map((entry) => [entry.sql]))('allows %s', async (sql) => {
    expect(await checkStatement(dialect, sql)).toMatchObject({ ok: true });
  });

  it('is large enough, without duplicates, each refusal sourced', () => {
    expect(corpus.REFUSED.length).toBeGreaterThanOrEqual(70);
    expect(corpus.ALLOWED.length).toBeGreaterThanOrEqual(25);
    const all = [...corpus.REFUSED, ...corpus.ALLOWED].map((entry) => entry.sql);
    expect(new Set(all).size).toBe(all.length);
    for (const entry of corpus.REFUSED) expect(entry.source.length).toBeGreaterThan(10);
  });
});

describe('the rules', () => {
  it('each has a description and each is proven by a corpus entry or a focused case', () => {
    const used = new Set([...postgresCorpus.REFUSED, ...mysqlCorpus.REFUSED].map((entry) => entry.rule));
    used.add('empty');
    for (const [rule, description] of Object.entries(SAFETY_RULES)) {
      expect(description.length).toBeGreaterThan(10);
      expect(used).toContain(rule);
    }
  });

  it('the PostgreSQL fixture schema and seed are PostgreSQL', async () => {
    for (const sql of postgresCorpus.FIXTURE_SQL) expect((await parse(sql)).stmts).toHaveLength(1);
    expect(postgresCorpus.FIXTURE_SQL.join('\n').match(/\(\d+, 'SKU-/g)).toHaveLength(150);
  });
});
