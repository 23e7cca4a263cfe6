// Opening the dashboard in a watched page, and reading what a canvas has on it.
import { watchedPage } from './browser.mjs';

/** Open `url + query` and wait until the page is ready (or says why not); `init` runs in the page before its scripts. */
export async function open(browser, url, query = '', { viewport, colorScheme, init } = {}) {
  const { page, problems } = await watchedPage(browser, viewport, colorScheme);
  if (init) await page.addInitScript(init);
  await page.goto(url + query);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 30_000 });
  return { page, problems };
}

/** Painted pixels of a canvas whose alpha is in [lo, hi]: an empty chart has (almost) none. */
export function inkOf(page, selector, lo = 1, hi = 255) {
  return page.$eval(selector, (c, [a, b]) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let ink = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] >= a && data[i] <= b) ink += 1;
    return ink;
  }, [lo, hi]);
}
