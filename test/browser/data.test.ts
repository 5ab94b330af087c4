import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { Browser, Page } from 'playwright-core';

import { PERMISSIONS } from '@shared/permissions';

import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { client } from '../helpers/client';
import { backupReads, type Credentials, databaseReads, ENGINE_DATA } from '../helpers/databases';
import { eventually, type Harness, startHarness } from '../helpers/harness';

/**
 * The console's data pages on the real stack (the worker, real database images): a managed database, a volume and a
 * bucket end to end, a database source that reaches nothing, and AI providers. axe-core checks every page in the
 * states a person reaches.
 */
describe('web console: databases, volumes, buckets, database sources and AI providers', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  let token: string;
  let dir: string;
  let projectId: string;
  let orgId: string;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-data-browser-'));
    h = await startHarness('data-browser', {
      VOLUMES_DIR: dir,
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      // A source or provider on this machine's loopback, where nothing listens: the api's own error is the point.
      ALLOW_PRIVATE_DATABASE_SOURCES: 'true',
      ALLOW_PRIVATE_AI_PROVIDERS: 'true',
    });
    browser = await launchBrowser();
    const org = await h.newOrgWithProject();
    orgId = org.orgId;
    token = org.token;
    projectId = org.projectId;
    page = await newPage(browser);
    await signIn(page, h.baseUrl, token, '/volumes');
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }, 120_000);

  const api = (method: string, path: string) =>
    fetch(`${h.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${token}` } });

  /** The page's heading, and no "Loading…" left: what a person waits for before reading. */
  async function settled(heading: string | RegExp) {
    await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 30_000 });
    // Polled from here: the console's CSP allows no evaluated strings in the page.
    const loading = page.getByRole('status').filter({ hasText: /Loading/ });
    for (let i = 0; i < 300 && (await loading.count()) > 0; i++) await page.waitForTimeout(100);
    expect(await loading.count()).toBe(0);
  }

  async function open(path: string, heading: string | RegExp) {
    await page.goto(h.baseUrl + path);
    await settled(heading);
  }

  it('creates a volume, lists it, and deletes it by its typed name', async () => {
    await open('/volumes', 'Volumes');
    await page.getByText('No volumes yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    const name = `vol-${randomUUID().slice(0, 6)}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Size (GB)', { exact: true }).fill('2');
    await page.getByRole('button', { name: 'Create volume' }).click();
    await settled(`Volume ${name}`);
    await page.getByText('Not mounted by any deployment').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('link', { name: 'All volumes' }).click();
    await settled('Volumes');
    await page.getByRole('link', { name }).waitFor();
    expect(await page.getByRole('row', { name: new RegExp(name) }).textContent()).toContain('2 GB');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'volumes');

    const id = (await page.getByRole('link', { name }).getAttribute('href'))!.split('/').pop()!;
    await eventually(async () => {
      const v = await client(h, token).get<{ data: { status: string } }>(`/platform/volumes/${id}`);
      return v.body.data.status === 'ready' ? true : undefined;
    }, 'the volume ready');
    await page.getByRole('link', { name }).click();
    await settled(`Volume ${name}`);
    await page.getByRole('button', { name: 'Delete volume' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete volume?' });
    await dialog.getByLabel(`Type ${name} to confirm`, { exact: true }).fill(name);
    await dialog.getByRole('button', { name: 'Delete volume' }).click();
    await settled('Volumes');
    await eventually(
      async () => ((await api('GET', `/platform/volumes/${id}`)).status === 404 ? true : undefined),
      'the volume gone',
    );
  });

  it("creates a bucket, shows a key's secret once, and deletes it by its typed name (with force once it holds an object)", async () => {
    await open('/buckets', 'Buckets');
    await page.getByText('No buckets yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    const name = `bkt-${randomUUID().slice(0, 6)}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Create bucket' }).click();
    await settled(`Bucket ${name}`);
    const url = page.url();
    const bucketId = url.split('/').pop()!;
    await page.getByText('No keys yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByLabel('Key name (optional)', { exact: true }).fill('uploader');
    await page.getByRole('button', { name: 'Make a key' }).click();
    const secretBox = page.getByRole('region', { name: /Secret access key of/ });
    await secretBox.waitFor();
    const secret = (await secretBox.getByTestId('secret-value').textContent())!;
    expect(secret.length).toBeGreaterThan(20);
    await page.getByRole('cell', { name: 'uploader' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // After a reload the key is listed, its secret is nowhere.
    await page.reload();
    await settled(`Bucket ${name}`);
    await page.getByRole('cell', { name: 'uploader' }).waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByRole('region', { name: /Secret access key of/ }).count()).toBe(0);

    await page.getByRole('link', { name: 'All buckets' }).click();
    await settled('Buckets');
    await page.getByRole('link', { name }).waitFor();
    await screenshot(page, 'buckets');
    await page.getByRole('link', { name }).click();
    await settled(`Bucket ${name}`);

    // An object in it, written straight to the store: a delete then needs force, and the dialog says so.
    const s3Name = ((await (await api('GET', `/platform/buckets/${bucketId}`)).json()) as { data: { s3Name: string } })
      .data.s3Name;
    await h.s3.send(new PutObjectCommand({ Bucket: s3Name, Key: 'kept.txt', Body: 'kept' }));

    // Deleting asks for the name: the button stays disabled until it is typed.
    await page.getByRole('button', { name: 'Delete bucket' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete bucket?' });
    await dialog.waitFor();
    await dialog.getByText(/refused unless .Also delete every object. is ticked/).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    const confirm = dialog.getByRole('button', { name: 'Delete bucket' });
    expect(await confirm.isDisabled()).toBe(true);
    await dialog.getByLabel(`Type ${name} to confirm`, { exact: true }).fill(name);
    await confirm.click();
    const notEmpty = dialog.getByRole('alert');
    await notEmpty.waitFor();
    const said = (await notEmpty.textContent())!;
    console.log(`bucket delete refused: ${said}`);
    expect(said).toMatch(/force/);
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByLabel(/Also delete every object/).check();
    await page.getByRole('button', { name: 'Delete bucket' }).click();
    await dialog.getByLabel(`Type ${name} to confirm`, { exact: true }).fill(name);
    await confirm.click();
    await settled('Buckets');
    await page.getByText('No buckets yet').waitFor();
    expect((await api('GET', `/platform/buckets/${bucketId}`)).status).toBe(404);
  });

  it("adds a database source that reaches nothing: the password is not shown, Test and a write say the api's reason", async () => {
    await open('/database-sources', 'Database sources');
    await page.getByText('No database sources yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    const password = `pw-${randomUUID()}`;
    const name = `src-${randomUUID().slice(0, 6)}`;
    await page.getByLabel('Name (optional)', { exact: true }).fill(name);
    await page.getByLabel('Host', { exact: true }).fill('127.0.0.1');
    await page.getByLabel('Port', { exact: true }).fill('1');
    await page.getByLabel('Database', { exact: true }).fill('app');
    await page.getByLabel('User', { exact: true }).fill('reader');
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('TLS', { exact: true }).selectOption('disable');
    await page.getByRole('button', { name: 'Add source' }).click();
    await settled(`Source ${name}`);
    await page.getByText('set (never shown)').waitFor();
    expect(await page.content()).not.toContain(password);
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Test connection' }).click();
    const failed = page.getByRole('alert').filter({ hasText: /^Test failed: / });
    await failed.waitFor({ timeout: 60_000 });
    const said = (await failed.textContent())!;
    console.log(`database source test: ${said}`);
    expect(said).toMatch(/ECONNREFUSED|refused|connect/i);
    expect(await seriousViolations(page)).toEqual([]);

    // A statement that writes is refused before it reaches the database, in the api's words.
    await page.getByLabel('SQL', { exact: true }).fill('DELETE FROM accounts');
    await page.getByRole('button', { name: 'Run query' }).click();
    const refused = page.getByRole('tabpanel', { name: 'Query' }).getByRole('alert');
    await refused.waitFor();
    const reason = (await refused.textContent())!;
    console.log(`refused statement: ${reason}`);
    expect(reason).not.toMatch(/ECONNREFUSED/);
    expect(reason).toMatch(/DELETE|read-only|SELECT/i);
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("creates a managed database: the api's refusal of a bad form, credentials only on request, a backup taken and deleted", async () => {
    await open('/databases', 'Databases');
    await page.getByText('No databases yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The api's words for what was wrong (no project chosen), nothing created.
    await page.getByLabel('Name', { exact: true }).fill('cache');
    await page.getByRole('button', { name: 'Create database' }).click();
    const refused = page.getByRole('alert').filter({ hasText: /projectId/ });
    await refused.waitFor();
    console.log(`database create refused: ${await refused.textContent()}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(((await (await api('GET', '/platform/databases')).json()) as { data: { total: number } }).data.total).toBe(
      0,
    );

    await page.getByLabel('Engine', { exact: true }).selectOption('redis');
    await page.getByLabel('Project', { exact: true }).selectOption(projectId);
    await page.getByRole('button', { name: 'Create database' }).click();
    await settled('Database cache');
    const id = page.url().split('/').pop()!;
    const base = `/platform/databases/${id}`;
    // Ready is read when the person reloads: the page does not poll.
    await databaseReads(client(h, token), base);
    await page.reload();
    await settled('Database cache');
    await page.getByText('ready', { exact: true }).first().waitFor();

    // Credentials: not on the page until asked for, then once in a copy box; the read is in the audit trail.
    expect(await page.content()).not.toContain('redis://');
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Reveal credentials' }).click();
    const box = page.getByRole('region', { name: /Connection URL/ });
    await box.waitFor();
    const url = (await box.getByTestId('secret-value').textContent())!;
    expect(url).toMatch(/^redis:\/\//);
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Hide credentials' }).click();
    await page.getByRole('button', { name: 'Reveal credentials' }).waitFor();
    expect(await page.content()).not.toContain(url);
    const trail = await client(h, token).get<{ data: { events: { action: string }[] } }>('/platform/audit?limit=100');
    expect(trail.body.data.events.map((e) => e.action)).toContain('database.reveal');

    // A backup: taken, seen complete after a reload of the list, deleted after a confirmation.
    await page.getByRole('button', { name: 'Back up now' }).click();
    await page.getByText('A backup is running').waitFor();
    const backupId = (
      await eventually(async () => {
        const r = await client(h, token).get<{ data: { backups: { id: string }[] } }>(`${base}/backups`);
        return r.body.data.backups[0];
      }, 'the backup listed')
    ).id;
    await backupReads(client(h, token), `${base}/backups/${backupId}`);
    await page.getByRole('button', { name: 'Reload backups' }).click();
    await page.getByText('complete', { exact: true }).waitFor();
    await page.getByRole('button', { name: /^Delete the backup of / }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the backup?' });
    await dialog.waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Delete backup' }).click();
    await page.getByText('No backups yet').waitFor();
    expect((await api('GET', `${base}/backups/${backupId}`)).status).toBe(404);

    await page.getByRole('link', { name: 'All databases' }).click();
    await settled('Databases');
    await page.getByRole('link', { name: 'cache' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'databases');

    await page.getByRole('link', { name: 'cache' }).click();
    await settled('Database cache');
    await page.getByRole('button', { name: 'Delete database' }).click();
    const del = page.getByRole('dialog', { name: 'Delete database?' });
    await del.getByLabel('Type cache to confirm', { exact: true }).fill('cache');
    await del.getByRole('button', { name: 'Delete database' }).click();
    await settled('Databases');
    await eventually(
      async () => ((await api('GET', base)).status === 404 ? true : undefined),
      'the database gone',
      120_000,
    );
  }, 300_000);

  it("adds a managed PostgreSQL database as a source: its schema, and a query's rows in a table", async () => {
    const owner = client(h, token);
    const made = await owner.post<{ data: { id: string } }>('/platform/databases', {
      projectId,
      engine: 'postgresql',
      name: 'shop',
      sizeGb: 1,
    });
    const dbId = made.body.data.id;
    await databaseReads(owner, `/platform/databases/${dbId}`);
    const creds = (await owner.get<{ data: Credentials }>(`/platform/databases/${dbId}/connection`)).body.data;
    await ENGINE_DATA.postgresql.write(h, dbId, creds, ['apple', 'pear']);

    await open('/database-sources', 'Database sources');
    await page.getByLabel('Connect to', { exact: true }).selectOption('managed');
    await page.getByRole('option', { name: 'shop (postgresql)' }).waitFor({ state: 'attached' });
    await page.getByLabel('Managed database', { exact: true }).selectOption(dbId);
    await page.getByLabel('Name (optional)', { exact: true }).fill('shop-data');
    await page.getByRole('button', { name: 'Add source' }).click();
    await settled('Source shop-data');

    await page.getByLabel('SQL', { exact: true }).fill('SELECT v FROM t ORDER BY v');
    await page.getByRole('button', { name: 'Run query' }).click();
    const results = page.getByRole('table', { name: 'Query results' });
    await results.waitFor({ timeout: 60_000 });
    expect(await results.getByRole('cell').allTextContents()).toEqual(['apple', 'pear']);
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('tab', { name: 'Schema' }).click();
    await page.getByRole('button', { name: 'Load the schema' }).click();
    const table = page.getByText('public.t', { exact: false }).first();
    await table.waitFor({ timeout: 60_000 });
    await table.click();
    await page
      .getByRole('table', { name: 'Columns of public.t' })
      .getByRole('cell', { name: 'v', exact: true })
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'database-sources');

    expect((await owner.del(`/platform/database-sources/${page.url().split('/').pop()!}`)).status).toBe(204);
    expect((await owner.del(`/platform/databases/${dbId}`)).status).toBe(202);
  }, 300_000);

  it('adds an AI provider whose key is never shown again, tests it and removes it', async () => {
    await open('/ai-providers', 'AI providers');
    await page.getByText('No AI providers yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    const key = `sk-${randomUUID()}`;
    await page.getByLabel('Name', { exact: true }).fill('local');
    await page.getByLabel('Base URL', { exact: true }).fill('http://127.0.0.1:1/v1');
    await page.getByLabel('API key', { exact: true }).fill(key);
    await page.getByLabel('Default model', { exact: true }).fill('gpt-4o-mini');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('cell', { name: 'local', exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);

    await page.getByRole('button', { name: 'Test local' }).click();
    const failed = page.getByRole('alert').filter({ hasText: /^Test failed/ });
    await failed.waitFor({ timeout: 90_000 });
    console.log(`provider test: ${await failed.textContent()}`);
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Remove local' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove local?' });
    await dialog.getByLabel('Type local to confirm', { exact: true }).fill('local');
    await dialog.getByRole('button', { name: 'Remove local' }).click();
    await page.getByText('No AI providers yet').waitFor();
  });

  it('offers a viewer the lists and none of the changes; the api refuses a forged one', async () => {
    const bucket = await client(h, token).post<{ data: { id: string; name: string } }>('/platform/buckets', {
      name: `seen-${randomUUID().slice(0, 6)}`,
    });
    const user = await h.identity.addUser({ orgId, email: `viewer-${orgId}@example.com`, role: 'viewer' });
    const viewer = await h.identity.createToken({ orgId, userId: user._id, name: 'viewer', scopes: [...PERMISSIONS] });
    const vpage = await newPage(browser);
    await signIn(vpage, h.baseUrl, viewer.token, '/buckets');
    await vpage.getByRole('link', { name: bucket.body.data.name }).click();
    await vpage.getByRole('heading', { level: 1, name: `Bucket ${bucket.body.data.name}` }).waitFor();
    await vpage.getByText('No keys yet').waitFor();
    expect(await vpage.getByRole('button', { name: 'Make a key' }).count()).toBe(0);
    expect(await vpage.getByRole('button', { name: 'Delete bucket' }).count()).toBe(0);
    expect(await seriousViolations(vpage)).toEqual([]);
    for (const [path, heading, create] of [
      ['/buckets', 'Buckets', 'Create a bucket'],
      ['/volumes', 'Volumes', 'Create a volume'],
      ['/databases', 'Databases', 'Create a managed database'],
      ['/database-sources', 'Database sources', 'Add a source'],
    ] as const) {
      await vpage.goto(h.baseUrl + path);
      await vpage.getByRole('heading', { level: 1, name: heading }).waitFor();
      await vpage.getByRole('heading', { level: 2 }).first().waitFor();
      expect(await vpage.getByRole('heading', { name: create }).count()).toBe(0);
    }
    await vpage.goto(h.baseUrl + '/ai-providers');
    await vpage.getByText('Only the organisation’s owners and admins manage AI providers').waitFor();
    const forged = await client(h, viewer.token).post(`/platform/buckets/${bucket.body.data.id}/credentials`, {});
    expect(forged.status).toBe(403);
    await vpage.context().close();
  });
});
