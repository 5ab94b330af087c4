import type { Browser, Page } from 'playwright-core';

import { PERMISSIONS } from '@shared/permissions';

import { type AxeFinding, launchBrowser, newPage, seriousViolations, signIn } from '../helpers/browser';
import { type Harness, startHarness } from '../helpers/harness';

/**
 * Every page the navigation offers, as an owner and as a viewer: axe-core finds no serious or critical violation on
 * any of them. The pages' own tests check the states they reach (forms, dialogs, results); this one makes sure no
 * page is left out, including those added later.
 */
describe('web console: accessibility of every page', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startHarness('a11y-browser', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  /** Waits until the page shows its heading and has settled its first reads (no "Loading…" left). */
  async function settled(page: Page) {
    await page.getByRole('heading', { level: 1 }).first().waitFor();
    // A locator, not an evaluated string: the console's CSP refuses eval, which Playwright's polling of a string uses.
    await page
      .getByRole('status')
      .filter({ hasText: /Loading/ })
      .first()
      .waitFor({ state: 'detached', timeout: 30_000 });
  }

  async function sweep(token: string): Promise<{ pages: string[]; findings: Record<string, AxeFinding[]> }> {
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, token);
    const nav = page.getByRole('navigation', { name: 'Console' });
    const hrefs = await nav.getByRole('link').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    const findings: Record<string, AxeFinding[]> = {};
    for (const href of hrefs) {
      await nav.locator(`a[href="${href}"]`).click();
      await page.waitForURL((url) => url.pathname.startsWith(href));
      await settled(page);
      const found = await seriousViolations(page);
      if (found.length > 0) findings[href] = found;
    }
    await page.context().close();
    return { pages: hrefs, findings };
  }

  it('as an owner: every page of the navigation', async () => {
    const org = await h.newOrg();
    const { pages, findings } = await sweep(org.token);
    expect(pages).toEqual(expect.arrayContaining(['/deployments', '/seller', '/builder', '/tokens', '/settings']));
    expect(findings).toEqual({});
  });

  it('as a viewer: the pages a viewer is offered', async () => {
    const org = await h.newOrg();
    const viewer = await h.identity.addUser({
      orgId: org.orgId,
      email: `viewer-${org.orgId}@example.com`,
      role: 'viewer',
    });
    const token = await h.identity.createToken({
      orgId: org.orgId,
      userId: viewer._id,
      name: 'viewer',
      scopes: [...PERMISSIONS],
    });
    const { pages, findings } = await sweep(token.token);
    expect(pages).toContain('/deployments');
    // A viewer is not offered what its role cannot read or do.
    expect(pages).not.toContain('/seller');
    expect(pages).not.toContain('/users');
    expect(findings).toEqual({});
  });
});
