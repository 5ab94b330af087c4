import type { Browser, Page } from 'playwright-core';

import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { startReceiver } from '../helpers/receiver';

type Data<T> = { status: string; data: T };

describe('web console: the seller dashboard and the organisation pages, in Chromium against the real stack', () => {
  let h: Harness;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    // Webhook attempts run on the worker; the receiver is on loopback, which only tests may target.
    h = await startHarness('seller-browser', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      WEBHOOK_RETRY_DELAYS_S: '1,1,1',
      WEBHOOK_FINAL_ATTEMPT_AFTER_S: '10',
    });
    receiver = await startReceiver();
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.stop();
    await h?.stop();
  });

  const lookup = (key: string) =>
    fetch(`${h.baseUrl}/api/v1/entitlements?email=${encodeURIComponent('ada@example.com')}`, {
      headers: { authorization: `Bearer ${key}` },
    });

  /** The value a SecretOnce shows, under its label. */
  const shownOnce = (page: Page, label: string) =>
    page.getByRole('region', { name: new RegExp(`^${label} — shown once`) }).getByTestId('secret-value');

  const receivedOf = (eventId: string) => receiver.received.filter((r) => r.headers['x-sales-event-id'] === eventId);

  it('saves the webhook, rotates the API key, sends a test event and resends it, refunds a sale', async () => {
    const org = await h.newOrg();
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, org.token, '/seller');
    await page.getByRole('heading', { level: 1, name: 'Seller' }).waitFor();

    // The webhook URL: saving shows the signing secret once; the page then shows it masked only.
    await page.getByLabel('Webhook URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save webhook URL' }).click();
    const secret = (await shownOnce(page, 'Signing secret').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Save and rotate the signing secret' }).waitFor();

    // The API key: created and shown once; creating another rotates it, and the old one is refused from then on.
    await page.getByRole('button', { name: 'Create or rotate API key' }).click();
    await page
      .getByRole('dialog', { name: 'Create a new API key?' })
      .getByRole('button', { name: 'Create new key' })
      .click();
    const oldKey = (await shownOnce(page, 'API key').textContent())!;
    expect((await lookup(oldKey)).status).toBe(200);
    await page.getByRole('button', { name: 'Create or rotate API key' }).click();
    await page
      .getByRole('dialog', { name: 'Create a new API key?' })
      .getByRole('button', { name: 'Create new key' })
      .click();
    // The new key replaces the old one on the page (locators only: the console's CSP refuses evaluated strings).
    await eventually(
      async () => ((await shownOnce(page, 'API key').textContent()) !== oldKey ? true : undefined),
      'the new API key on the page',
    );
    const newKey = (await shownOnce(page, 'API key').textContent())!;
    expect(newKey).not.toBe(oldKey);
    expect((await lookup(oldKey)).status).toBe(401);
    const fresh = await lookup(newKey);
    expect(fresh.status).toBe(200);
    expect(await fresh.json()).toEqual({ entitlements: [] });
    // Revoked (after a confirmation): no key works until a new one is made.
    await page.getByRole('button', { name: 'Revoke API key' }).click();
    await page.getByRole('dialog', { name: 'Revoke the API key?' }).getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('status').filter({ hasText: 'The API key is revoked' }).waitFor();
    expect((await lookup(newKey)).status).toBe(401);

    // Send test event: the receiver really gets it, and its row shows the attempt's status and response code.
    await page.getByRole('button', { name: 'Send test event' }).click();
    const test = await eventually(
      async () => receiver.received.find((r) => r.headers['x-sales-event-type'] === 'test'),
      'the test event at the receiver',
    );
    const eventId = test.headers['x-sales-event-id']!;
    const row = page.getByRole('row').filter({ hasText: eventId });
    // Its status in words and the response code in a cell of its own (not a digit run inside an ID or a date).
    const code200 = { name: '200', exact: true } as const;
    await row.filter({ hasText: 'delivered' }).getByRole('cell', code200).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: `Attempts of ${eventId}` }).click();
    const attempts = page.getByRole('dialog', { name: `Attempts of event ${eventId}` });
    await attempts.getByRole('row').filter({ hasText: 'test' }).getByRole('cell', code200).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await attempts.getByRole('button', { name: 'Close' }).click();

    // Resend: one more attempt of the same event, at the receiver and in the event's attempts.
    await page.getByRole('button', { name: `Resend ${eventId}` }).click();
    await eventually(async () => receivedOf(eventId).length === 2 || undefined, 'the resent event at the receiver');
    expect(receivedOf(eventId).map((r) => r.raw.toString())).toEqual([test.raw.toString(), test.raw.toString()]);
    await page.getByRole('button', { name: `Attempts of ${eventId}` }).click();
    await attempts.getByRole('row').filter({ hasText: 'manual' }).getByRole('cell', code200).waitFor();
    expect(await attempts.getByRole('row').count()).toBe(3); // the header and two attempts
    await attempts.getByRole('button', { name: 'Close' }).click();

    // The signing secret is not shown again once the page is left.
    await page.reload();
    await page.getByRole('heading', { level: 2, name: 'Deliveries' }).waitFor();
    await page.getByText(receiver.url, { exact: true }).waitFor();
    expect(await page.content()).not.toContain(secret);
    expect(await page.content()).not.toContain(newKey);

    // Products added here; a sale the checkout records appears in the list and is refunded after confirmation.
    await page.getByLabel('Product name').fill('Course');
    await page.getByLabel('Price').fill('49');
    await page.getByRole('button', { name: 'Add product' }).click();
    await page.getByRole('cell', { name: 'Course' }).waitFor();
    const api = client(h, org.token);
    const products = await api.get<Data<{ products: { id: string; name: string }[] }>>('/platform/products');
    expect(products.body.data.products.map((p) => p.name)).toEqual(['Course']);
    const sale = await api.post<Data<{ saleId: string }>>('/platform/sales', {
      productId: products.body.data.products[0]!.id,
      buyer: { email: 'ada@example.com', name: 'Ada' },
      amount: 49,
      currency: 'USD',
    });
    expect(sale.status).toBe(200);
    await page.reload();
    await page.getByRole('button', { name: 'Refund sale to ada@example.com' }).click();
    await page.getByRole('dialog', { name: 'Refund this sale?' }).getByRole('button', { name: 'Refund' }).click();
    await page.getByRole('row').filter({ hasText: 'ada@example.com' }).filter({ hasText: 'refunded' }).waitFor();
    await eventually(
      async () => receiver.received.find((r) => r.headers['x-sales-event-type'] === 'sale.refunded'),
      'sale.refunded at the receiver',
    );
    await page.getByRole('heading', { level: 1 }).scrollIntoViewIfNeeded();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'seller');
  });

  it('shows tokens, secrets, users and the audit trail with its filters in the URL, with no axe findings', async () => {
    const org = await h.newOrg();
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, org.token, '/tokens');
    await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
    await page.getByRole('table', { name: 'Your access tokens' }).getByRole('row').nth(1).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'tokens');

    await page.goto(h.baseUrl + '/secrets');
    await page.getByRole('heading', { level: 1, name: 'Secrets' }).waitFor();
    await page.getByText('No secrets yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    await page.goto(h.baseUrl + '/users');
    await page.getByRole('heading', { level: 1, name: 'Users and roles' }).waitFor();
    await page.getByLabel('E-mail').fill('dee@example.com');
    await page.getByRole('combobox', { name: 'Role', exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Add user' }).click();
    await page.getByRole('combobox', { name: 'Role of dee@example.com' }).waitFor();
    expect(await page.getByRole('combobox', { name: 'Role of dee@example.com' }).inputValue()).toBe('viewer');
    await page.getByRole('combobox', { name: 'Role of dee@example.com' }).selectOption('developer');
    await page.getByRole('button', { name: 'Change the role of dee@example.com' }).click();
    const users = client(h, org.token);
    await eventually(async () => {
      const list = await users.get<Data<{ email: string; role: string }[]>>('/platform/users');
      return list.body.data.find((u) => u.email === 'dee@example.com' && u.role === 'developer');
    }, 'the role change');
    expect(await seriousViolations(page)).toEqual([]);

    // The audit trail, filtered: the filters go to the query string, and a reload keeps them.
    await page.goto(h.baseUrl + '/audit');
    await page.getByRole('heading', { level: 1, name: 'Audit trail' }).waitFor();
    await page.getByRole('cell', { name: 'user.update' }).waitFor();
    await page.getByLabel('Action').fill('user.create');
    await page.getByRole('combobox', { name: 'Outcome' }).selectOption('success');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/\/audit\?action=user\.create&outcome=success$/);
    await page.reload();
    await page.getByRole('cell', { name: 'user.create' }).waitFor();
    expect(await page.getByRole('cell', { name: 'user.update' }).count()).toBe(0);
    expect(await page.getByLabel('Action').inputValue()).toBe('user.create');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'audit');
  });
});
