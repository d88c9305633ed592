// Debian's Chromium driven headless by playwright-core (never a browser Playwright downloads):
// one launch per test file. REST_TEST_CHROMIUM overrides /usr/bin/chromium (.ci/run installs it).

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { REPO_ROOT } from '../process/rest-process.js';

export const CHROMIUM = process.env['REST_TEST_CHROMIUM'] ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/** Screenshots of the console's screens, written by each run (git-ignored, not committed). */
export const SCREENSHOTS = join(REPO_ROOT, 'test/e2e/browser/screenshots');

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

const FOCUSED_TEXT = `(() => {
  const el = document.activeElement;
  if (el === null) return '';
  const label = el.id === '' ? null : document.querySelector('label[for="' + el.id + '"]');
  return (el.getAttribute('aria-label') ?? '') + ' ' + (label?.textContent ?? '') + ' ' + (el.textContent ?? '');
})()`;

/** Presses Tab until the focused element's accessible text matches `name` (keyboard only). */
export async function tabTo(page: Page, name: RegExp, most = 40): Promise<void> {
  for (let i = 0; i < most; i++) {
    await page.keyboard.press('Tab');
    // Run in the page (its DOM is not this program's): the focused element's label and text.
    const focused = await page.evaluate<string>(FOCUSED_TEXT);
    if (name.test(focused)) return;
  }
  throw new Error(`no focusable element matching ${String(name)} within ${most} Tab presses`);
}
