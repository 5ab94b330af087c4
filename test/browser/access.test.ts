import type { Browser, Page } from 'playwright-core';

import { createSecretStore } from '@shared/secrets/store';
import { createVault } from '@shared/secrets/vault';

import { launchBrowser, newPage, seriousViolations, signIn } from '../helpers/browser';
import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Data<T> = { status: string; data: T };

describe('web console: tokens shown once and revoked, secrets never shown again', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startHarness('access-browser', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  const html = (page: Page) => page.content();

  it('creates a token with chosen scopes, shows it once, and revokes it after confirmation', async () => {
    const org = await h.newOrg();
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, org.token, '/tokens');
    await page.getByLabel('Token name').fill('ci');
    await page.getByLabel('deployment.read').check();
    await page.getByLabel('project.read').check();
    await page.getByLabel('Expires in').selectOption('30d');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByRole('region', { name: /^Token “ci” — shown once/ }).getByTestId('secret-value');
    const token = (await shown.textContent())!;
    expect(token).toMatch(/^svc_/);

    // The token works, with exactly the scopes chosen and about the lifetime asked for.
    const me = await client(h, token).get<Data<{ scopes: string[]; expiresAt: string }>>('/platform/tokens/current');
    expect(me.status).toBe(200);
    expect(me.body.data.scopes.sort()).toEqual(['deployment.read', 'project.read']);
    const days = (Date.parse(me.body.data.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29);
    expect(days).toBeLessThanOrEqual(30);

    // Listed by name, never by value; after a reload the value is gone for good.
    await page.getByRole('row').filter({ hasText: 'ci' }).filter({ hasText: 'deployment.read' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Revoke ci' }).waitFor();
    expect(await html(page)).not.toContain(token);
    expect(await seriousViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'Revoke ci' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke token “ci”?' });
    expect(await seriousViolations(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Revoke token' }).click();
    await dialog.waitFor({ state: 'detached' });
    // Revoked tokens leave the list (unless asked for).
    await page.getByRole('button', { name: 'Revoke ci' }).waitFor({ state: 'detached' });
    await page.getByLabel('Show revoked tokens').check();
    await page.getByRole('row').filter({ hasText: 'ci' }).filter({ hasText: 'revoked' }).waitFor();
    expect((await client(h, token).get('/platform/tokens/current')).status).toBe(401);
  });

  it('saves a secret and replaces its value without ever showing either again; deletes it after typing its name', async () => {
    const org = await h.newOrg();
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, org.token, '/secrets');
    const first = `first-${Date.now()}-value`;
    await page.getByLabel('Secret name').fill('GIT_TOKEN');
    await page.getByLabel('Value', { exact: true }).fill(first);
    await page.getByLabel('Allowed hosts').fill('github.com');
    await page.getByRole('button', { name: 'Save secret' }).click();
    await page.getByRole('status').filter({ hasText: 'Secret GIT_TOKEN saved' }).waitFor();
    await page.getByRole('cell', { name: 'GIT_TOKEN', exact: true }).waitFor();
    // The form is emptied and nothing on the page (nor the api's list) holds the value.
    expect(await page.getByLabel('Value', { exact: true }).inputValue()).toBe('');
    expect(await html(page)).not.toContain(first);
    const api = client(h, org.token);
    const list = await api.get<Data<{ id: string; name: string }[]>>('/platform/secrets');
    expect(JSON.stringify(list.body)).not.toContain(first);
    const id = list.body.data[0]!.id;

    // Replacing the value: the vault holds the new one, and the page shows neither.
    const second = `second-${Date.now()}-value`;
    await page.getByRole('button', { name: 'Replace the value of GIT_TOKEN' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replace the value of GIT_TOKEN' });
    await dialog.getByLabel('New value').fill(second);
    await dialog.getByRole('button', { name: 'Save new value' }).click();
    await dialog.waitFor({ state: 'detached' });
    const vault = createVault({ store: createSecretStore(h.db), key: h.config.SECRETS_KEY });
    expect(await vault.reveal(org.orgId, id)).toBe(second);
    // The replacement is in the audit trail by the secret's ID, never by its value.
    const trail = await api.get<Data<{ events: { resource: unknown; outcome: string }[] }>>(
      '/platform/audit?action=secret.update',
    );
    expect(trail.body.data.events).toEqual([
      expect.objectContaining({ resource: { type: 'secret', id }, outcome: 'success' }),
    ]);
    expect(JSON.stringify(trail.body)).not.toContain(second);
    await page.reload();
    await page.getByRole('cell', { name: 'GIT_TOKEN', exact: true }).waitFor();
    expect(await html(page)).not.toContain(first);
    expect(await html(page)).not.toContain(second);
    expect(await seriousViolations(page)).toEqual([]);

    // Another organisation cannot replace it.
    const other = client(h, (await h.newOrg()).token);
    expect((await other.call('PUT', `/platform/secrets/${id}`, { value: 'stolen' })).status).toBe(404);
    expect(await vault.reveal(org.orgId, id)).toBe(second);

    await page.getByRole('button', { name: 'Delete GIT_TOKEN' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete GIT_TOKEN?' });
    await confirm.getByLabel('Type GIT_TOKEN to confirm').fill('GIT_TOKEN');
    await confirm.getByRole('button', { name: 'Delete GIT_TOKEN' }).click();
    await page.getByText('No secrets yet').waitFor();
    expect((await api.get<Data<unknown[]>>('/platform/secrets')).body.data).toEqual([]);
  });
});
