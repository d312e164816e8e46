/// <reference lib="dom" />
// Headless Chromium for the dashboard's browser tests, its screenshots and its bench: Debian's
// chromium (installed by .ci/run when missing; CHROMIUM_PATH to use another build) driven by
// playwright-core, which brings no browser of its own. The flags keep it off the network: this
// machine's closed network refuses its background connections.
import fs from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM_CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

function chromiumPath(): string | null {
  const asked = process.env.CHROMIUM_PATH;
  if (asked) return fs.existsSync(asked) ? asked : null;
  return CHROMIUM_CANDIDATES.find((p) => fs.existsSync(p)) ?? null;
}

export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath)
    throw new Error(`no Chromium found (looked at ${CHROMIUM_CANDIDATES.join(', ')}; apt-get install chromium, or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Viewports the dashboard is checked at. */
export const VIEWPORTS = {
  laptop: { width: 1366, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

/** What went wrong on a page: console errors, uncaught exceptions, CSP violations, failed requests. */
export function watchPage(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText ?? ''}`));
  return problems;
}

/**
 * Open a dashboard page with `key` already in the tab's sessionStorage (as after the prompt), and
 * wait (bounded) until it marks itself ready; its data-ready-ms (from the page's script start) returned.
 */
export async function openPage(page: Page, url: string, key: string, timeoutMs = 30_000): Promise<{ ready: string; readyMs: number }> {
  await page.addInitScript((k) => sessionStorage.setItem('content-intelligence.api-key', k), key);
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.waitForSelector('body[data-ready="true"], body[data-ready="error"]', { timeout: timeoutMs });
  const ready = (await page.getAttribute('body', 'data-ready')) ?? '';
  const readyMs = Number(await page.getAttribute('body', 'data-ready-ms'));
  return { ready, readyMs };
}
