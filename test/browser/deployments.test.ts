import { randomUUID } from 'node:crypto';
import path from 'node:path';

import type { Browser, Page } from 'playwright-core';

import { PERMISSIONS } from '@shared/permissions';

import { baseImageEnv } from '../helpers/base-images';
import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { makeZip, zipDirectory } from '../helpers/zip';

const SITE = path.resolve(__dirname, '..', 'fixtures', 'sources', 'static-site');

/** The text of the element `selector` matches, read from the page (no string evaluation: the console's CSP). */
const textOf = (page: Page, selector: string) =>
  page.evaluate<string>(`document.querySelector(${JSON.stringify(selector)})?.textContent ?? ''`);

/** Waits until `check` holds for the page's text under `selector`. */
const pageShows = (page: Page, selector: string, check: (text: string) => boolean, what: string, ms = 180_000) =>
  eventually(async () => (check(await textOf(page, selector)) ? true : undefined), what, ms);

/**
 * The Deployments area in the browser on the real stack (worker, Temporal, FerretDB, MinIO, engine, edge): a zip
 * dropped on the page is built and followed live to running, its logs shown, a new release shipped and rolled back,
 * and a viewer neither sees nor can forge a destroy.
 */
describe('web console: deployments', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startHarness('deployments-browser', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      ...(await baseImageEnv()),
    });
    browser = await launchBrowser();
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  it('deploys a dropped zip live, shows its logs, ships and rolls back a release, and hides destroy from a viewer', async () => {
    const owner = await h.newOrg('pro');
    const api = client(h, owner.token);
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, owner.token, '/deployments');
    await page.getByRole('heading', { level: 1, name: 'Deployments' }).waitFor();
    await page.getByText('No deployments yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // The new-deployment form; the zip is DROPPED on the drop zone (a drop event carrying a DataTransfer).
    await page.getByRole('link', { name: 'New deployment' }).click();
    await page.getByRole('heading', { level: 1, name: 'New deployment' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'deployment-new');
    const name = `site-${randomUUID().slice(0, 6)}`;
    await page.getByLabel('Name').fill(name);
    const zip = (await zipDirectory(SITE)).toString('base64');
    await page.evaluate(`(() => {
      const bytes = Uint8Array.from(atob(${JSON.stringify(zip)}), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'site.zip', { type: 'application/zip' }));
      const zone = document.querySelector('[aria-label="Drop zone for the app\\'s files"]');
      zone.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt }));
      zone.dispatchEvent(new DragEvent('drop', { bubbles: true, cancelable: true, dataTransfer: dt }));
    })()`);
    await page.getByText('1 file chosen: site.zip').waitFor();
    await page.getByRole('button', { name: 'Deploy' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor({ timeout: 30_000 });
    const id = page.url().split('/deployments/')[1]!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // A mark on the document: still there at the end means the status came without a reload.
    await page.evaluate('window.mark = 1');
    const statusCell = 'dl.facts div:first-child dd';
    await pageShows(page, statusCell, (t) => t === 'running', 'the status to reach running live');
    expect(await page.evaluate('window.mark')).toBe(1);
    expect((await api.get<{ data: { status: string } }>(`/platform/deployments/${id}`)).body.data.status).toBe(
      'running',
    );

    // Its logs: the build's lines, filtered to the build stream.
    await page.getByLabel('Show').selectOption('build');
    await pageShows(page, '[role="log"]', (t) => t.includes('[build]'), 'a build line in the logs', 60_000);

    // The release list shows r1; a new release from a zip chosen with the file input, then a rollback to r1.
    const releasesText = () =>
      page.evaluate<string>(
        `[...document.querySelectorAll('table')].filter((t) => t.querySelector('caption')?.textContent === 'Releases').map((t) => t.textContent).join('')`,
      );
    await eventually(async () => ((await releasesText()).includes('r1') ? true : undefined), 'release r1', 60_000);
    const v2 = await makeZip({ 'index.html': '<!doctype html><title>v2</title><h1>v2</h1>' });
    await page
      .getByLabel('Zip file or files')
      .setInputFiles({ name: 'v2.zip', mimeType: 'application/zip', buffer: v2 });
    await page.getByRole('button', { name: 'Ship release' }).click();
    await page.getByText('New release accepted').waitFor();
    await eventually(
      async () => ((await releasesText()).includes('r2') ? true : undefined),
      'release r2 in the list',
      180_000,
    );
    const rollback = page.getByRole('button', { name: 'Roll back to r1' });
    await rollback.waitFor({ timeout: 180_000 });
    await rollback.click();
    await eventually(
      async () => ((await releasesText()).includes('rollback to r1') ? true : undefined),
      'the rollback in the releases list',
      180_000,
    );
    await pageShows(page, statusCell, (t) => t === 'running', 'running after the rollback');
    expect(await seriousViolations(page)).toEqual([]);
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'deployment-detail');

    // The list shows it with its status.
    await page.getByRole('link', { name: 'Deployments', exact: true }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Deployments' }).waitFor();
    // The deployment made since the list was first read is in it, running.
    await page.getByRole('link', { name, exact: true }).waitFor();
    await pageShows(page, 'main table tbody', (t) => t.includes('running'), 'the running status in the list', 30_000);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'deployments');
    // The list follows the organisation's stream: a stop made elsewhere shows without a reload.
    await page.evaluate('window.listMark = 1');
    expect((await api.post(`/platform/deployments/${id}/stop`)).status).toBe(202);
    await pageShows(page, 'main table tbody', (t) => t.includes('stopped'), 'the stop in the list, live', 120_000);
    expect(await page.evaluate('window.listMark')).toBe(1);

    // A viewer: no destroy button, and a forged destroy from its session (cookie and CSRF token) is refused.
    const viewer = await api.post<{ data: { id: string } }>('/platform/users', {
      email: `viewer-${randomUUID().slice(0, 8)}@example.test`,
      role: 'viewer',
    });
    expect(viewer.status).toBe(200);
    const viewerToken = (
      await h.identity.createToken({
        orgId: owner.orgId,
        userId: viewer.body.data.id,
        name: 'viewer',
        scopes: [...PERMISSIONS],
      })
    ).token;
    const vpage = await newPage(browser);
    await signIn(vpage, h.baseUrl, viewerToken, `/deployments/${id}`);
    await vpage.getByRole('heading', { level: 1, name }).waitFor();
    await vpage.getByRole('heading', { level: 2, name: 'Releases' }).waitFor();
    expect(await vpage.getByRole('button', { name: 'Destroy deployment' }).count()).toBe(0);
    expect(await vpage.getByRole('button', { name: 'Ship release' }).count()).toBe(0);
    const forged = await vpage.evaluate<{ status: number; csrf: boolean }>(`(async () => {
      const session = await (await fetch('/platform/session')).json();
      const r = await fetch('/platform/deployments/${id}', {
        method: 'DELETE',
        headers: { 'x-csrf-token': session.data.csrfToken },
      });
      return { status: r.status, csrf: session.data.csrfToken.length > 0 };
    })()`);
    expect(forged.csrf).toBe(true);
    expect([403, 404]).toContain(forged.status);
    expect((await api.get(`/platform/deployments/${id}`)).status).toBe(200);
    await vpage.context().close();

    // The owner's destroy, confirmed by typing the name.
    const listText = await textOf(page, 'main');
    await page.goto(`${h.baseUrl}/deployments/${id}`);
    expect([listText.includes(name), listText]).toEqual([true, expect.any(String)]);
    await page.getByRole('button', { name: 'Destroy deployment' }).click();
    await page.getByLabel(`Type ${name} to confirm`).fill(name);
    await page.getByRole('dialog').getByRole('button', { name: 'Destroy deployment' }).click();
    await page.getByRole('heading', { level: 1, name: 'Deployments' }).waitFor();
    expect((await api.get(`/platform/deployments/${id}`)).status).toBe(404);
    await page.context().close();
  }, 900_000);
});
