// The published site, served from loopback, in headless Chromium, over a store made by real
// hftbench runs. Screenshots go to gh-pages/test-output/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../build/build.mjs';
import { launch, watchedPage } from './helpers/browser.mjs';
import { realStore, XSS } from './helpers/real-store.mjs';
import { serve } from './helpers/serve.mjs';

const SHOTS = new URL('../test-output/', import.meta.url).pathname;
let tmp; let site; let server; let chromium; let clients;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'hft-dashboard-'));
  mkdirSync(SHOTS, { recursive: true });
  const made = realStore(tmp);
  clients = made.clients;
  site = join(tmp, 'site');
  build({ store: made.store, out: site });
  server = await serve(site);
  chromium = await launch();
});

after(async () => {
  await chromium?.close();
  await server?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function open(query = '') {
  const { page, problems } = await watchedPage(chromium.browser);
  await page.goto(server.url + query);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 30_000 });
  return { page, problems };
}

/** Painted pixels of a canvas: an empty chart has (almost) none. */
function inkOf(page, selector) {
  return page.$eval(selector, (c) => {
    const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
    let ink = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) ink += 1;
    return ink;
  });
}

test('trend and latest-run charts are drawn, without console errors', async () => {
  const { page, problems } = await open();
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
  const cards = await page.locator('#trends .card').count();
  assert.equal(cards, clients.length, 'one trend chart per scenario × client (quick suite: small)');
  assert.ok(await inkOf(page, '#trends .card canvas') > 500, 'the trend canvas has lines on it');
  assert.ok(await inkOf(page, '#latest [data-latest] canvas') > 500, 'the client comparison has bars');
  assert.equal(await page.locator('#latest [data-latest] canvas').count(), 2, 'bars and percentile distribution');
  assert.match(await page.locator('table.runner').innerText(), /cpu_model/);
  await page.screenshot({ path: join(SHOTS, 'dashboard.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('a filter changes the view and the URL, and the URL brings the view back', async () => {
  const { page, problems } = await open();
  const client = clients.at(-1);
  await page.selectOption('#f-client', client);
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  assert.match(page.url(), new RegExp(`[?&]client=${client}(&|$)`));
  assert.deepEqual(await page.locator('#trends .card').evaluateAll((cs) => cs.map((c) => c.dataset.series)), [`small/${client}`]);
  await page.selectOption('#f-metric', 'throughput_rps');
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  assert.match(page.url(), /metric=throughput_rps/);
  const link = page.url();
  await page.screenshot({ path: join(SHOTS, 'filtered.png'), fullPage: true });
  await page.close();

  const again = await open(link.slice(server.url.length));
  assert.equal(await again.page.inputValue('#f-client'), client);
  assert.equal(await again.page.inputValue('#f-metric'), 'throughput_rps');
  assert.equal(await again.page.locator('#trends .card').count(), 1);
  assert.deepEqual([...problems, ...again.problems], []);
  await again.page.close();
});

test('a commit message with markup shows as text and runs nothing', async () => {
  const { page, problems } = await open();
  assert.equal(await page.locator('#latest .runline .message').textContent(), XSS);
  // Hover the last point of a trend: the tooltip line shows the same message as text.
  const box = await page.locator('#trends .card .u-over').first().boundingBox();
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  await page.waitForFunction((x) => document.querySelector('#trends .card .hover')?.textContent.includes(x), XSS);
  assert.equal(await page.locator('img').count(), 0, 'no <img> element was created');
  await page.waitForTimeout(200); // an onerror handler would have fired by now
  await page.screenshot({ path: join(SHOTS, 'xss-as-text.png'), fullPage: true });
  assert.deepEqual(problems, [], 'no alert dialog, no error');
  await page.close();
});

test('a store newer than the dashboard is refused with a clear message', async () => {
  const { page } = await watchedPage(chromium.browser);
  await page.route('**/data/index.json', (route) => route.fulfill({ json: { schema_version: 2, suites: {} } }));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.state === 'error');
  assert.match(await page.locator('#status').textContent(), /schema_version 2, newer than this dashboard/);
  await page.close();
});
