import type { Browser, Page } from 'playwright-core';

import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { type Harness, startHarness } from '../helpers/harness';

/** The console's bar for its first load (the shell and the landing page): compressed JavaScript bytes. */
const FIRST_LOAD_BUDGET = 300 * 1024;

describe('web console: sign-in, the shell, sign-out, accessibility and the first load', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startHarness('console-browser', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  /** Every script the page fetched, with the bytes that crossed the wire (compressed as served). */
  function countScripts(page: Page): () => Promise<{ bytes: number; files: string[] }> {
    const pending: Promise<[string, number]>[] = [];
    page.on('requestfinished', (req) => {
      if (req.resourceType() !== 'script') return;
      pending.push(req.sizes().then((s) => [req.url(), s.responseBodySize] as [string, number]));
    });
    return async () => {
      const all = await Promise.all(pending);
      return { bytes: all.reduce((n, [, b]) => n + b, 0), files: all.map(([u]) => u) };
    };
  }

  it('signs in with a token, keeps the session over a reload, and signs out for good', async () => {
    const org = await h.newOrg();
    const page = await newPage(browser);
    const scripts = countScripts(page);
    await page.goto(h.baseUrl + '/');
    await page.getByLabel('Access token').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'sign-in');

    // A wrong token: the api's words, announced.
    await page.getByLabel('Access token').fill('svc_' + 'x'.repeat(43));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /unknown or has been revoked/ })
      .waitFor();

    await page.getByLabel('Access token').fill(org.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByRole('heading', { level: 1 }).waitFor();
    // The token is not kept by the page: only the httpOnly cookie holds the session.
    // Evaluated in the page, as text: this file is compiled without the DOM's types.
    const stored = await page.evaluate<string>(
      'JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })',
    );
    expect(stored).not.toContain(org.token);
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'slipway_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(await page.evaluate<string>('document.cookie')).not.toContain('slipway_session');

    // The first load: the shell and its landing page, compressed as served.
    const first = await scripts();
    expect(first.files.length).toBeGreaterThan(0);
    expect(first.bytes).toBeLessThan(FIRST_LOAD_BUDGET);
    console.log(`first load: ${first.bytes} bytes of compressed JavaScript in ${first.files.length} files`);

    await page.reload();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Access token').waitFor();
    // The cookie the browser held no longer opens anything, wherever it is replayed from.
    const replay = await fetch(`${h.baseUrl}/platform/tokens/current`, {
      headers: { cookie: `slipway_session=${session!.value}` },
    });
    expect(replay.status).toBe(401);
    await page.reload();
    await page.getByLabel('Access token').waitFor();
    await page.context().close();
  });

  it('refuses a change sent with the session cookie but without its CSRF token, all a forged request can send', async () => {
    const org = await h.newOrg();
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, org.token);
    // What a forged form or script can do: send the cookie without the CSRF token it cannot read.
    const status = await page.evaluate(async () => {
      const res = await fetch('/platform/projects', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'forged' }),
      });
      return res.status;
    });
    expect(status).toBe(403);
    await page.context().close();
  });
});
