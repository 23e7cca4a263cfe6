// Debian's chromium, headless, driven by playwright-core (no browser download).
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.HFT_CHROMIUM ?? '/usr/bin/chromium';

/** Launch chromium; playwright gives it a fresh temporary profile (--user-data-dir) each time. */
export async function launch() {
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  } catch (err) {
    throw new Error(`cannot start ${CHROMIUM}: ${err.message}; install it with 'make deps' (apt package chromium)`);
  }
  return {
    browser,
    close: () => browser.close(),
  };
}

/** A page that records console errors, page errors and dialogs (an XSS would open one). */
export async function watchedPage(browser, viewport = { width: 1400, height: 1000 }, colorScheme = 'light') {
  const page = await browser.newPage({ viewport, colorScheme });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('dialog', async (d) => { problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
  return { page, problems };
}
