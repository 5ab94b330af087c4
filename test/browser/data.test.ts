import { randomUUID } from 'node:crypto';

import type { Browser, Page } from 'playwright-core';

import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { type Harness, startHarness } from '../helpers/harness';

/**
 * The console's data pages on the real stack: volumes and buckets end to end, a database source that reaches
 * nothing, the database page's empty state and the api's refusal of a bad create, and AI providers. axe-core checks
 * every page in the states a person reaches.
 */
describe('web console: databases, volumes, buckets, database sources and AI providers', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  let token: string;

  beforeAll(async () => {
    h = await startHarness(
      'data-browser',
      {
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        // A source or provider on this machine's loopback, where nothing listens: the api's own error is the point.
        ALLOW_PRIVATE_DATABASE_SOURCES: 'true',
        ALLOW_PRIVATE_AI_PROVIDERS: 'true',
      },
      { worker: false },
    );
    browser = await launchBrowser();
    token = (await h.newOrgWithProject()).token;
    page = await newPage(browser);
    await signIn(page, h.baseUrl, token, '/volumes');
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

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

  it('creates a volume and lists it, with where it is mounted', async () => {
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
  });

  it("creates a bucket, shows a key's secret once, and deletes the bucket by its typed name", async () => {
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

  it("shows the databases page's empty state and the api's refusal of a bad create", async () => {
    await open('/databases', 'Databases');
    await page.getByText('No databases yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'databases');

    await page.getByLabel('Name', { exact: true }).fill('Not_A_Label');
    await page.getByRole('button', { name: 'Create database' }).click();
    const refused = page.getByRole('alert').filter({ hasText: /projectId|name/ });
    await refused.waitFor();
    console.log(`database create refused: ${await refused.textContent()}`);
    expect(await seriousViolations(page)).toEqual([]);
    expect(((await (await api('GET', '/platform/databases')).json()) as { data: { total: number } }).data.total).toBe(
      0,
    );
  });

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
});
