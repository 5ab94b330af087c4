import { createHash, randomUUID } from 'node:crypto';

import type { Browser, Page } from 'playwright-core';

import { previewRouteKey } from '@shared/builder/sandbox-store';
import { edgeRouterFromConfig } from '@shared/edge';
import { createProjectStore } from '@shared/projects/store';

import { openai, type ProviderDouble, startOpenAiDouble } from '../helpers/ai-doubles';
import { launchBrowser, newPage, screenshot, seriousViolations, signIn } from '../helpers/browser';
import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Data<T> = { data: T; message?: string };
interface SessionBody {
  id: string;
  head: { id: string; seq: number; files: { path: string; sha256: string }[] } | null;
  checkpoints: { id: string; seq: number; reason: string }[];
  sandbox: { previewUrl: string; inSync: boolean } | null;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** The page the model's turn writes: a whole document, so the preview frame passes axe as well. */
const INDEX =
  '<!doctype html><html lang="en"><head><title>Hello</title></head><body><main><h1>Hello</h1></main></body></html>';

/** The AI builder in the browser, on the real stack (worker, Temporal, FerretDB, MinIO, engine, edge) and a model double. */
describe('web console: AI builder', () => {
  let h: Harness;
  let oa: ProviderDouble;
  let browser: Browser;
  const sessions: string[] = [];

  beforeAll(async () => {
    h = await startHarness('builder-browser', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      ALLOW_PRIVATE_AI_PROVIDERS: 'true',
      AI_RETRY_ATTEMPTS: '2',
      AI_RETRY_MAX_DELAY_S: '1',
      SANDBOX_IDLE_S: '600',
    });
    oa = await startOpenAiDouble({ models: ['gpt-4o-mini'] });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    const edge = edgeRouterFromConfig(h.config);
    for (const id of sessions) await edge.unpublish(previewRouteKey(id)).catch(() => undefined);
    await browser?.close();
    await oa?.close();
    await h?.stop();
  });

  /** Records every text the streamed reply and its steps showed while the turn ran (they leave once it has ended). */
  const watchLiveTurn = (page: Page) =>
    page.evaluate(`(() => {
      const seen = (window.seenLive = []);
      new MutationObserver(() => {
        const live = document.querySelector('[role="log"] [aria-busy="true"]');
        if (live && live.textContent) seen.push(live.textContent);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    })()`);
  /** Waits until the editor of index.html shows `text` (read from the page, as the editor renders it). */
  const editorShows = (page: Page, text: string) =>
    page
      .getByRole('textbox', { name: 'Contents of index.html' })
      .filter({ hasText: text })
      .waitFor({ timeout: 30_000 });

  it('creates a session, streams a turn, edits and saves a file, reverts, previews and shares it', async () => {
    const o = await h.newOrgWithProject();
    const api = client(h, o.token);
    const provider = await api.post<Data<{ id: string }>>('/platform/ai-providers', {
      name: 'double',
      kind: 'openai_compatible',
      baseUrl: oa.baseUrl,
      apiKey: oa.apiKey,
      defaultModel: 'gpt-4o-mini',
    });
    expect([provider.status, provider.body.message]).toEqual([200, undefined]);

    const page = await newPage(browser);
    await signIn(page, h.baseUrl, o.token, '/builder');
    await page.getByRole('heading', { name: 'AI Builder', level: 1 }).waitFor();
    await page.getByText('No session in this project yet').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await screenshot(page, 'builder');

    // A new session, on the double's provider.
    await page.getByLabel('Title').fill('Shop');
    await page.getByLabel('AI provider').selectOption(provider.body.data.id);
    await page.getByRole('button', { name: 'Create session' }).click();
    await page.getByRole('heading', { name: 'Shop', level: 1 }).waitFor();
    const id = page.url().split('/builder/')[1]!;
    sessions.push(id);
    const listed = await api.get<Data<{ id: string; title: string }[]>>(
      `/platform/builder/projects/${o.projectId}/sessions`,
    );
    expect(listed.body.data.map((s) => [s.id, s.title])).toEqual([[id, 'Shop']]);

    // A message: the model writes index.html through a tool, then answers in pieces.
    const reply = Array.from({ length: 30 }, (_, i) => `part${i} `);
    oa.reply(
      {
        stream: openai.toolCalls([
          { id: 'call_1', name: 'write_file', args: [`{"path":"index.html","content":${JSON.stringify(INDEX)}}`] },
        ]),
      },
      { stream: openai.text(reply) },
    );
    await watchLiveTurn(page);
    await page.getByLabel('Message').fill('Make a page that says Hello');
    await page.getByRole('button', { name: 'Send' }).click();
    const conversation = page.getByRole('log', { name: 'Conversation' });
    await conversation.getByText(reply.join('').trim()).waitFor({ timeout: 60_000 });
    // While the turn ran, its reply and its tool step were on the page before its message was.
    const seen = await page.evaluate<string[]>('window.seenLive');
    expect(seen.some((t) => t.includes('part0'))).toBe(true);
    expect(seen.some((t) => t.includes(`Wrote index.html (${INDEX.length} bytes)`))).toBe(true);
    expect(oa.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(2);

    // The file the turn wrote, in the tree and in the editor.
    await page.getByRole('button', { name: `index.html, ${INDEX.length} bytes` }).click();
    const editor = page.getByRole('textbox', { name: 'Contents of index.html' });
    await editor.waitFor();
    await editorShows(page, '<h1>Hello</h1>');

    // Edited and saved: a new checkpoint holding the edit.
    await editor.click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText('Edited page');
    await page.getByRole('button', { name: 'Save index.html' }).click();
    await page.getByRole('cell', { name: '#2 (current)' }).waitFor();
    const saved = (await api.get<Data<SessionBody>>(`/platform/builder/sessions/${id}`)).body.data;
    expect(saved.checkpoints.map((c) => [c.seq, c.reason])).toEqual([
      [2, 'save'],
      [1, 'turn'],
    ]);
    expect(saved.head!.files).toEqual([{ path: 'index.html', sha256: sha('Edited page'), size: 11 }]);

    // Reverted to the turn's checkpoint: a third one with its files, and the editor shows them again.
    await page.getByRole('button', { name: 'Revert to checkpoint #1' }).click();
    await page.getByRole('cell', { name: '#3 (current)' }).waitFor();
    const reverted = (await api.get<Data<SessionBody>>(`/platform/builder/sessions/${id}`)).body.data;
    expect(reverted.head).toMatchObject({ seq: 3, files: [{ path: 'index.html', sha256: sha(INDEX) }] });
    await editorShows(page, '<h1>Hello</h1>');

    // The live preview: a static sandbox, its stable URL in the frame, showing the page.
    await page.getByLabel('Runtime').selectOption('static');
    await page.getByRole('button', { name: 'Start preview' }).click();
    const frame = page.getByTitle('Live preview of Shop');
    await frame.waitFor({ timeout: 180_000 });
    const withSandbox = (await api.get<Data<SessionBody>>(`/platform/builder/sessions/${id}`)).body.data;
    expect(withSandbox.sandbox).toMatchObject({ inSync: true, previewUrl: expect.stringMatching(/^http:\/\//) });
    expect(await frame.getAttribute('src')).toBe(withSandbox.sandbox!.previewUrl);
    await frame.contentFrame().getByRole('heading', { name: 'Hello' }).waitFor({ timeout: 60_000 });

    // A share link of the current files.
    await page.getByLabel('Access').selectOption('remix');
    await page.getByRole('button', { name: 'Create share link' }).click();
    const link = page.getByRole('link', { name: /^Share link / });
    await link.waitFor();
    const href = (await link.getAttribute('href'))!;
    expect(href).toMatch(new RegExp(`^${h.baseUrl}/builder/shares/[A-Za-z0-9_-]{16,64}$`));
    const slug = href.split('/').pop()!;
    const shared = await api.get<Data<{ sessionId: string; access: string }>>(`/platform/builder/shares/${slug}`);
    expect(shared.body.data).toMatchObject({ sessionId: id, access: 'remix' });

    expect(await seriousViolations(page)).toEqual([]);
    await page.evaluate('window.scrollTo(0, 0)');
    await screenshot(page, 'builder-session');

    // The link opens the shared files; a remix copies them into a new session of the project.
    await page.goto(href);
    await page.getByRole('heading', { name: 'Shared: Shop', level: 1 }).waitFor();
    await page.getByRole('cell', { name: 'index.html' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Remix into a new session' }).click();
    await page.waitForURL((u) => /\/builder\/[0-9a-f-]{36}$/.test(u.pathname) && !u.pathname.endsWith(id));
    await page.getByRole('heading', { name: 'Shop', level: 1 }).waitFor();
    const remixId = new URL(page.url()).pathname.split('/').pop()!;
    sessions.push(remixId);
    const remixed = (
      await api.get<Data<SessionBody & { remixedFrom: { slug: string } }>>(`/platform/builder/sessions/${remixId}`)
    ).body.data;
    expect(remixed).toMatchObject({
      remixedFrom: { slug },
      head: { files: [{ path: 'index.html', sha256: sha(INDEX) }] },
    });
    await page.getByRole('button', { name: `index.html, ${INDEX.length} bytes` }).waitFor();
    await page.context().close();

    // An org viewer in the project reads the session, its files and preview, and is offered no change.
    const viewer = await h.identity.addUser({ orgId: o.orgId, email: `${randomUUID()}@x.invalid`, role: 'viewer' });
    await createProjectStore(h.db).addMember({
      projectId: o.projectId,
      orgId: o.orgId,
      userId: viewer._id,
      role: 'viewer',
      addedAt: new Date(),
      addedBy: o.userId,
    });
    const viewerToken = await h.identity.createToken({ orgId: o.orgId, userId: viewer._id, name: 'v', scopes: [] });
    const reader = await newPage(browser);
    await signIn(reader, h.baseUrl, viewerToken.token, `/builder/${id}`);
    await reader.getByRole('heading', { name: 'Shop', level: 1 }).waitFor();
    await reader.getByText('Your role reads this session').waitFor();
    await reader.getByRole('button', { name: `index.html, ${INDEX.length} bytes` }).click();
    await reader.getByRole('textbox', { name: 'Contents of index.html' }).waitFor();
    await reader.getByTitle('Live preview of Shop').waitFor();
    for (const name of ['Send', 'Save index.html', 'Revert to checkpoint #1', 'Create share link', 'Sync preview'])
      expect([name, await reader.getByRole('button', { name }).count()]).toEqual([name, 0]);
    expect(await seriousViolations(reader)).toEqual([]);
    await reader.context().close();
  }, 420_000);
});
