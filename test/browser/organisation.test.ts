import { randomUUID } from 'node:crypto';

import type { Browser, Page } from 'playwright-core';

import { createCloudCredentialStore } from '@shared/cloud/store';
import { createDeploymentStore } from '@shared/deployments/store';
import type { DeploymentEvent, DeploymentRecord } from '@shared/deployments/types';
import { PERMISSIONS } from '@shared/permissions';

import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { client } from '../helpers/client';
import { startDnsServer } from '../helpers/dns-server';
import { eventually, type Harness, startHarness } from '../helpers/harness';

/**
 * The organisation's pages of the console against the real stack: projects and their members, domains (their empty
 * state and the api's refusal: a domain needs a running deployment, which this file does not pay for), Git, tickets,
 * usage, the organisation's settings and its cloud providers, each through axe.
 */
describe('web console: projects, domains, Git, tickets, usage and settings', () => {
  let h: Harness;
  let browser: Browser;
  let dns: Awaited<ReturnType<typeof startDnsServer>>;

  beforeAll(async () => {
    // A DNS server of our own on loopback: the domain's records are added to it as an owner would at their provider.
    dns = await startDnsServer();
    h = await startHarness(
      'organisation-browser',
      {
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        DNS_RESOLVERS: dns.address,
        DNS_TIMEOUT_MS: '1000',
        // A Git binding's repository is on this machine.
        ALLOW_PRIVATE_GIT_HOSTS: 'true',
      },
      { worker: false },
    );
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await h?.stop();
    await dns?.close();
  });

  const heading = (page: Page, name: string | RegExp) => page.getByRole('heading', { level: 1, name }).waitFor();

  /** A deployment as the api records it, with its status events: usage and domains read it, no container needed. */
  async function recordDeployment(
    org: { orgId: string; userId: string },
    status: DeploymentRecord['status'],
    events: Array<[DeploymentEvent['status'], number]>,
  ): Promise<string> {
    const id = randomUUID();
    const at = (t: number) => new Date(t);
    await createDeploymentStore(h.db).insert({
      _id: id,
      orgId: org.orgId,
      createdBy: org.userId,
      origin: 'platform',
      name: `rec-${id.slice(0, 6)}`,
      provider: 'engine_local',
      source: { type: 'image', image: 'example/app:1' },
      port: 8080,
      revision: 1,
      status,
      version: events.length,
      events: events.map(([s, t]) => ({ status: s, message: s, at: at(t) })),
      createdAt: at(events[0]![1]),
      updatedAt: at(events.at(-1)![1]),
    } satisfies DeploymentRecord);
    return id;
  }

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
    // In the hour now open (at its start the test waits up to 90 s for it, hence its longer timeout): closed hours are
    // rolled up into immutable records by any file's rollup schedule, and a record written afterwards about an hour
    // already rolled up is (by design) not counted again.
    const hourStart = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const needed = hourStart + 90_000 - Date.now();
    if (needed > 0) await new Promise((r) => setTimeout(r, needed));
    const built = hourStart + 20_000;
    await recordDeployment(owner, 'stopped', [
      ['queued', built - 10_000],
      ['building', built],
      ['stopped', built + 60_000],
    ]);
    await page.getByLabel('Period', { exact: true }).selectOption('24h');
    await page.getByText(/per UTC hour/).waitFor();
    await page.getByRole('img', { name: /^Compute per hour: .*Build time 1 minutes in total/ }).waitFor();
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
  }, 240_000);

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

  /** Cloud credentials stored as a PUT that passed its check stores them: no cloud is reachable from here. */
  async function saveCloudCredentials(org: { orgId: string; userId: string }, clientId: string) {
    const store = createCloudCredentialStore(h.db, h.config.SECRETS_KEY);
    await store.promote(
      await store.putCandidate(org.orgId, 'cloud_b_container_apps', {
        tenantId: randomUUID(),
        clientId,
        clientSecret: 'a-cloud-secret',
        subscriptionId: randomUUID(),
        resourceGroup: 'apps',
        environmentId: '/subscriptions/s/resourceGroups/apps/providers/Microsoft.App/managedEnvironments/apps',
        regions: ['westeurope', 'northeurope'],
        registry: { repository: 'acme.azurecr.io/apps' },
      }),
      org.userId,
    );
  }

  it("lists the clouds, refuses credentials in the api's words, shows saved ones and removes them", async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, owner.token, '/providers');
    await heading(page, 'Cloud providers');

    // Each cloud, not available until the organisation has credentials for it, with the api's reason.
    const { providers } = (
      await api.get<{ providers: Array<{ id: string; name: string; available: boolean; reason?: string }> }>(
        '/compat/providers',
      )
    ).body;
    const clouds = providers.filter((p) => p.id !== 'engine_local');
    expect(clouds.map((c) => [c.id, c.available])).toEqual([
      ['cloud_a_run', false],
      ['cloud_b_container_apps', false],
      ['cloud_c_ecs_fargate', false],
    ]);
    for (const c of clouds) {
      const card = page.getByRole('region', { name: c.name, exact: true });
      await card.getByText('not available', { exact: true }).waitFor();
      await card.getByText(c.reason!).waitFor();
      await card.getByText('no credentials saved').waitFor();
    }
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'cloud-providers');

    // Text that is not JSON is stopped here; a body of the wrong shape is the api's 400, shown as it is.
    const run = clouds[0]!;
    await page.getByRole('button', { name: `Set credentials of ${run.name}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('Template for cloud_a_run', { exact: true }).click();
    await dialog.getByRole('region', { name: 'Template for cloud_a_run' }).getByText('"serviceAccountKey"').waitFor();
    await dialog.getByLabel('Credentials (JSON)').fill('{"regions": [');
    await dialog.getByRole('button', { name: 'Try and save' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'The credentials are not valid JSON' }).waitFor();
    const wrong = { regions: ['europe-west1'] };
    const refusal = await api.call<{ message: string }>('PUT', '/platform/providers/cloud_a_run/credentials', wrong);
    expect(refusal.status).toBe(400);
    await dialog.getByLabel('Credentials (JSON)').fill(JSON.stringify(wrong));
    await dialog.getByRole('button', { name: 'Try and save' }).click();
    await dialog.getByRole('alert').filter({ hasText: refusal.body.message }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'cloud-providers-refused');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await api.get<{ data: unknown[] }>('/platform/providers/credentials')).body.data).toEqual([]);

    // Saved credentials: who they sign in as, where, and the cloud available; the secret is nowhere on the page.
    const clientId = randomUUID();
    await saveCloudCredentials(owner, clientId);
    await page.reload();
    const azure = page.getByRole('region', { name: clouds[1]!.name, exact: true });
    await azure.getByText('available', { exact: true }).waitFor();
    await azure.getByText(clientId).waitFor();
    await azure.getByText('westeurope, northeurope').waitFor();
    await azure.getByText('acme.azurecr.io/apps').waitFor();
    await azure.getByRole('button', { name: `Replace credentials of ${clouds[1]!.name}` }).waitFor();
    expect(await page.getByText('a-cloud-secret').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'cloud-providers-saved');

    // Removed after typing the cloud's ID: no deployment runs on it.
    await azure.getByRole('button', { name: `Remove credentials of ${clouds[1]!.name}` }).click();
    await page.getByLabel('Type cloud_b_container_apps to confirm').fill('cloud_b_container_apps');
    await page
      .getByRole('dialog')
      .getByRole('button', { name: `Remove credentials of ${clouds[1]!.name}` })
      .click();
    await azure.getByText('no credentials saved').waitFor();
    await azure.getByText('not available', { exact: true }).waitFor();
    expect((await api.get<{ data: unknown[] }>('/platform/providers/credentials')).body.data).toEqual([]);
  });

  it('shows a viewer the clouds and their saved credentials without setting or removing them', async () => {
    const owner = await h.newOrg();
    const clientId = randomUUID();
    await saveCloudCredentials(owner, clientId);
    const viewer = (
      await client(h, owner.token).post<{ data: { id: string } }>('/platform/users', {
        email: `viewer-${randomUUID().slice(0, 8)}@example.com`,
        role: 'viewer',
      })
    ).body.data;
    const token = (
      await h.identity.createToken({ orgId: owner.orgId, userId: viewer.id, name: 't', scopes: [...PERMISSIONS] })
    ).token;
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, token, '/providers');
    await heading(page, 'Cloud providers');
    await page.getByText(clientId).waitFor();
    await page.getByText('Only owners and admins set or remove a cloud’s credentials.').waitFor();
    expect(await page.getByRole('button', { name: /credentials of/ }).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    // The api is the guard: a forged removal with the viewer's token is refused.
    expect((await client(h, token).del('/platform/providers/cloud_b_container_apps/credentials')).status).toBe(403);
    // Gone again, so other files' reconciler sweeps do not try an account no cloud answers for.
    expect((await client(h, owner.token).del('/platform/providers/cloud_b_container_apps/credentials')).status).toBe(
      204,
    );
  });

  it('adds a domain, lists the records to create, verifies it against DNS and says when to try again', async () => {
    const owner = await h.newOrg();
    const now = Date.now();
    const deploymentId = await recordDeployment(owner, 'running', [
      ['queued', now - 120_000],
      ['running', now - 60_000],
    ]);
    const page = await newPage(browser);
    await signIn(page, h.baseUrl, owner.token, '/domains');
    await heading(page, 'Domains');
    const host = `shop-${randomUUID().slice(0, 8)}.example.test`;
    await page.getByLabel('Host name').fill(host);
    expect(await page.getByLabel('Deployment', { exact: true }).inputValue()).toBe(deploymentId);
    await page.getByRole('button', { name: 'Add domain' }).click();
    await heading(page, `Domain ${host}`);
    const domain = (
      await client(h, owner.token).get<{ data: { domains: Array<{ token: string; dnsRecords: unknown[] }> } }>(
        '/platform/domains',
      )
    ).body.data.domains[0]!;
    // The TXT challenge, exactly as the api answers it, with a copy button for its name and its value.
    const txt = page.getByRole('row').filter({ hasText: `_slipway-challenge.${host}` });
    await txt.getByText(domain.token).waitFor();
    await txt.getByRole('button', { name: `Copy TXT value for _slipway-challenge.${host}` }).waitFor();
    expect(await page.getByRole('row').count()).toBe(1 + domain.dnsRecords.length);
    expect(await seriousViolations(page)).toEqual([]);

    // Checked now, before the record exists: the page says what DNS held.
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByRole('status').filter({ hasText: 'Checked: pending.' }).waitFor();
    await page.getByText('missing', { exact: true }).first().waitFor();

    dns.add('TXT', `_slipway-challenge.${host}`, domain.token);
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByRole('status').filter({ hasText: 'Checked: verified.' }).waitFor();
    await page.getByText('found, holding the token').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'domains-verified');

    // The third check is allowed, the fourth within 5 minutes refused, saying when to try again.
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page.getByRole('status').filter({ hasText: 'Checked: verified.' }).waitFor();
    await page.getByRole('button', { name: 'Verify now' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /Try again in \d+ s\./ })
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("binds a repository to a deployment, shows its webhook secret once, and lists the binding's deliveries", async () => {
    const owner = await h.newOrg();
    const now = Date.now();
    const deploymentId = await recordDeployment(owner, 'running', [
      ['queued', now - 120_000],
      ['running', now - 60_000],
    ]);
    const page = await newPage(browser);
    // A repository on this machine (ALLOW_PRIVATE_GIT_HOSTS above, as a private setup may set it).
    const repo = `http://localhost/example/app-${randomUUID().slice(0, 8)}.git`;
    await signIn(page, h.baseUrl, owner.token, '/git');
    await heading(page, 'Git');
    await page.getByLabel('Repository URL').fill(repo);
    await page.getByLabel('Branch').fill('main');
    await page.getByLabel('Deployment ID').fill(deploymentId);
    await page.getByRole('button', { name: 'Bind repository' }).click();
    const secret = await page.getByTestId('secret-value').textContent();
    expect(secret).toMatch(/\S{16,}/);
    await page.getByRole('link', { name: repo }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'git');

    await page.getByRole('link', { name: repo }).click();
    await heading(page, `Binding of ${repo}`);
    await page.getByText('No delivery yet').waitFor();
    // Never shown again: the binding's page has no secret.
    expect(await page.getByText(secret!).count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
  });
});
