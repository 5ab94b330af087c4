import { randomUUID } from 'node:crypto';

import type { Browser, Page } from 'playwright-core';

import { createDeploymentStore } from '@shared/deployments/store';
import type { DeploymentEvent, DeploymentRecord } from '@shared/deployments/types';
import { PERMISSIONS } from '@shared/permissions';

import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';

/**
 * The organisation's pages of the console against the real stack: projects and their members, domains (their empty
 * state and the api's refusal: a domain needs a running deployment, which this file does not pay for), Git, tickets,
 * usage and the organisation's settings, each through axe.
 */
describe('web console: projects, domains, Git, tickets, usage and settings', () => {
  let h: Harness;
  let browser: Browser;

  beforeAll(async () => {
    h = await startHarness('organisation-browser', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
  });

  const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor();

  it('runs an organisation as its owner: a project and its member, a ticket, the settings, usage', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const email = `member-${randomUUID().slice(0, 8)}@example.com`;
    const user = (await api.post<{ data: { id: string } }>('/platform/users', { email, role: 'developer' })).body.data;

    const page = await newPage(browser);
    await signIn(page, h.baseUrl, owner.token, '/projects');
    await heading(page, 'Projects');
    await page.getByText('No project yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // A project, created and then given a member by e-mail.
    const name = `web-${randomUUID().slice(0, 8)}`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Framework', { exact: true }).fill('nextjs');
    await page.getByRole('button', { name: 'Create project' }).click();
    await heading(page, `Project ${name}`);
    const project = (await api.get<{ data: { projects: Array<{ id: string; name: string }> } }>('/platform/projects'))
      .body.data.projects[0]!;
    expect(project.name).toBe(name);

    await page.getByLabel('User ID or e-mail').fill(email);
    await page.getByLabel('Project role').selectOption('viewer');
    await page.getByRole('button', { name: 'Add member' }).click();
    const roleOf = page.getByLabel(`Role of ${email}`);
    await roleOf.waitFor();
    const members = async () =>
      (await api.get<{ data: Array<{ userId: string; role: string }> }>(`/platform/projects/${project.id}/members`))
        .body.data;
    expect((await members()).find((m) => m.userId === user.id)?.role).toBe('viewer');

    await roleOf.selectOption('developer');
    await eventually(
      async () => ((await members()).find((m) => m.userId === user.id)?.role === 'developer' ? true : undefined),
      'the member to be a developer',
    );
    // An unknown address: the page says what to do, and nothing is sent.
    await page.getByLabel('User ID or e-mail').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Add member' }).click();
    await page.getByRole('alert').filter({ hasText: 'No user nobody@example.com' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // Renamed from its page.
    await page.getByLabel('Project name').fill(`${name}-renamed`);
    await page.getByRole('button', { name: 'Save project' }).click();
    await heading(page, `Project ${name}-renamed`);

    await page.getByRole('link', { name: 'All projects' }).click();
    await page.getByRole('link', { name: `${name}-renamed` }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'projects');

    // Domains: the empty state, and the api's refusal of a domain on a deployment that does not exist.
    await page.getByRole('link', { name: 'Domains' }).click();
    await heading(page, 'Domains');
    await page.getByText('No custom domain yet').waitFor();
    const bad = { hostname: 'www.example.com', deploymentId: randomUUID() };
    const refusal = await api.post<{ message: string }>('/platform/domains', bad);
    expect(refusal.status).toBeGreaterThanOrEqual(400);
    await page.getByLabel('Host name').fill(bad.hostname);
    await page.getByLabel('Deployment ID').fill(bad.deploymentId);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByRole('alert').filter({ hasText: refusal.body.message }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'domains');

    // Git: its empty lists and forms.
    await page.getByRole('link', { name: 'Git' }).click();
    await heading(page, 'Git');
    await page.getByText('No binding yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    // A ticket: opened, commented on, moved to pending.
    await page.getByRole('link', { name: 'Support tickets' }).click();
    await heading(page, 'Support tickets');
    await page.getByText('No ticket yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('Subject').fill('Builds are slow');
    await page.getByLabel('What happened').fill('Each build of web takes ten minutes.');
    await page.getByLabel('Severity').selectOption('high');
    await page.getByRole('button', { name: 'Open ticket' }).click();
    await heading(page, 'Ticket: Builds are slow');
    await page.getByRole('textbox', { name: 'Comment' }).fill('It began on Monday.');
    await page.getByRole('button', { name: 'Add comment' }).click();
    await page.getByText('It began on Monday.').waitFor();
    await page.getByLabel('New status').selectOption('pending');
    await page.getByRole('button', { name: 'Change status' }).click();
    await page.getByText(/open → pending by/).waitFor();
    const tickets = (await api.get<{ data: { tickets: Array<{ id: string; status: string }> } }>('/platform/tickets'))
      .body.data.tickets;
    expect(tickets.map((t) => t.status)).toEqual(['pending']);
    const detail = (
      await api.get<{ data: { comments: Array<{ body: string }> } }>(`/platform/tickets/${tickets[0]!.id}`)
    ).body.data;
    expect(detail.comments.map((c) => c.body)).toEqual(['It began on Monday.']);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'tickets');

    // Usage: a build of the last hours, as the api records a deployment's statuses, is charted per hour.
    await page.getByRole('link', { name: 'Usage' }).click();
    await heading(page, 'Usage');
    await page.getByRole('heading', { level: 2, name: 'Totals' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    const built = Date.now() - 90 * 60_000;
    const ev = (status: DeploymentEvent['status'], at: number): DeploymentEvent => ({
      status,
      message: status,
      at: new Date(at),
    });
    const id = randomUUID();
    await createDeploymentStore(h.db).insert({
      _id: id,
      orgId: owner.orgId,
      createdBy: owner.userId,
      origin: 'platform',
      name: `built-${id.slice(0, 6)}`,
      provider: 'engine_local',
      source: { type: 'image', image: 'example/app:1' },
      port: 8080,
      revision: 1,
      status: 'stopped',
      version: 3,
      events: [ev('queued', built - 60_000), ev('building', built), ev('stopped', built + 30 * 60_000)],
      createdAt: new Date(built - 60_000),
      updatedAt: new Date(built + 30 * 60_000),
    } satisfies DeploymentRecord);
    await page.getByLabel('Period').selectOption('24h');
    await page.getByText(/per UTC hour/).waitFor();
    await page.getByRole('img', { name: /^Compute per hour: .*Build time 30 minutes in total/ }).waitFor();
    // Every chart drawn (a locator, not a page function: the console's CSP forbids evaluated strings).
    await page.getByRole('main').locator('canvas').nth(3).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'usage');

    // The organisation's name, changed here, is the header's after a reload.
    await page.getByRole('link', { name: 'Settings' }).click();
    await heading(page, 'Organisation settings');
    const orgName = `Renamed ${randomUUID().slice(0, 6)}`;
    await page.getByLabel('Organisation name').fill(orgName);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved' }).waitFor();
    expect((await api.get<{ data: { name: string } }>('/platform/organization')).body.data.name).toBe(orgName);
    await page.reload();
    await page.getByRole('banner').getByText(orgName).waitFor();
    await heading(page, 'Organisation settings');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'settings');
  });

  it('shows a viewer the settings without the form, and refuses its forged change', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const viewer = (
      await api.post<{ data: { id: string } }>('/platform/users', {
        email: `viewer-${randomUUID().slice(0, 8)}@example.com`,
        role: 'viewer',
      })
    ).body.data;
    const token = (
      await h.identity.createToken({ orgId: owner.orgId, userId: viewer.id, name: 't', scopes: [...PERMISSIONS] })
    ).token;
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, token, '/settings');
    await heading(page, 'Organisation settings');
    await page.getByText('Only owners and admins change these settings.').waitFor();
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    // The api is the guard: the same change, forged with the viewer's token, is refused.
    expect((await client(h, token).call('PATCH', '/platform/organization', { name: 'mine' })).status).toBe(403);

    await page.getByRole('link', { name: 'Projects' }).click();
    await heading(page, 'Projects');
    expect(await page.getByRole('button', { name: 'Create project' }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
