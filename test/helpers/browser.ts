import fs from 'node:fs/promises';
import path from 'node:path';

import AxeBuilder from '@axe-core/playwright';
import { type Browser, chromium, type Page } from 'playwright-core';

/**
 * The web console's browser tests drive Debian's Chromium (global-setup installs it) through Playwright: no browser
 * download, the same engine a user of this machine would open.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where the tests leave their screenshots (the README shows the main pages from here, copied to docs/). */
export const SCREENSHOT_DIR =
  process.env.SLIPWAY_SCREENSHOT_DIR ?? path.resolve(__dirname, '..', '..', '.artifacts', 'screenshots');

export function launchBrowser(): Promise<Browser> {
  // As root (CI) Chromium's own sandbox cannot start; /dev/shm is small in containers.
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** A page of a fresh context (its own cookies), with a desktop viewport. */
export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 860 } });
  return context.newPage();
}

/** Signs in through the sign-in page, as a person does, and waits for the shell. */
export async function signIn(page: Page, baseUrl: string, token: string, landing = '/'): Promise<void> {
  await page.goto(baseUrl + landing);
  await page.getByLabel('Access token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export interface AxeFinding {
  id: string;
  impact: string | null | undefined;
  help: string;
  targets: string[];
}

/** axe-core on the page as it is now: the serious and critical violations (the bar is none). */
export async function seriousViolations(page: Page): Promise<AxeFinding[]> {
  const result = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'])
    .analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n) => n.target.join(' ')) }));
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await fs.mkdir(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false });
  return file;
}
