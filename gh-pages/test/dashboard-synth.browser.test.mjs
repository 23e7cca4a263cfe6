// The site over the synthetic store (every run of 16 rounds: spreads, gate verdicts, a bisect):
// noise bands, the compare view of two points with the gate's table, URL state, phone width, dark.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { synthStore } from '../tools/synth-store.mjs';
import { inkOf, open as openPage } from './helpers/page.mjs';
import { SHOTS, startSite } from './helpers/site.mjs';

let site; let server; let chromium;

before(async () => {
  // Wide spreads (±10 % P50, ±20 % P99), so the bands are plain to see and to count.
  site = await startSite('hft-dashboard-synth-', (tmp) => {
    const store = join(tmp, 'store');
    synthStore({ out: store, commits: 400, scenarios: 2, clients: 2, gated: 2, spread: 0.2 });
    return { store };
  });
  ({ server, chromium } = site);
});

after(async () => {
  await site?.close();
});

const open = (query = '', options = {}) => openPage(chromium.browser, server.url, query, options);
// The band fill is translucent (alpha 0x38 = 56) on a transparent canvas; lines are opaque.
const bandInk = (page) => inkOf(page, '#trends .card canvas', 40, 72);

test('noise bands: P50 and P99 carry the stored spread, P99.9 and throughput have none', async () => {
  const { page, problems } = await open('?metric=p50_us');
  const banded = await bandInk(page);
  await page.close();
  const plain = await open('?metric=throughput_rps');
  const none = await bandInk(plain.page);
  assert.ok(banded > 5000, `a band fills area around P50 (${banded} translucent pixels)`);
  assert.ok(none < banded / 5, `no band on throughput (${none} translucent pixels against ${banded}: line edges only)`);
  assert.deepEqual([...problems, ...plain.problems], []);
  await plain.page.close();
});

test('the header names the open regression and its bisect culprit', async () => {
  const { page, problems } = await open();
  const items = page.locator('#overview .regressions li');
  assert.ok(await items.count() >= 1);
  assert.match(await page.locator('#overview .bisect').first().textContent(), /^culprit [0-9a-f]{10} commit \d+: tune the order path$/);
  assert.match(await items.first().locator('a', { hasText: 'open issue' }).getAttribute('href'), /^https:\/\/github\.com\/example\/hft-bench\/issues\?q=.*label%3Aperformance/);
  assert.match(await page.locator('#overview .latest a', { hasText: 'job' }).getAttribute('href'), /^https:\/\/github\.com\/example\/hft-bench\/actions\/runs\/\d+$/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('sorting by change puts the largest slowdown first, and the URL keeps the sort', async () => {
  const { page, problems } = await open();
  await page.locator('#series-table button[data-sort="change"]').click();
  const changes = await page.$$eval('#series-table tbody td.change', (tds) => tds.map((td) => parseFloat(td.textContent.replace(/[^\d.+-]/g, ''))));
  assert.deepEqual(changes, [...changes].sort((a, b) => b - a));
  assert.match(page.url(), /sort=change/);
  await page.locator('#series-table button[data-sort="change"]').click();
  assert.match(page.url(), /sort=-change/);
  assert.deepEqual(problems, []);
  await page.close();
});

/** Click the point at `fraction` of a chart's width and pick it as `which` (a or b). */
async function pickPoint(page, fraction, which) {
  const card = page.locator('#trends .card').first();
  const box = await card.locator('.u-over').boundingBox();
  await page.mouse.move(box.x + box.width * fraction, box.y + box.height / 2);
  await page.mouse.click(box.x + box.width * fraction, box.y + box.height / 2);
  await card.locator(`.hover button[data-pick="${which}"]`).click();
}

test('compare two points: the gate\'s table and wording, both distributions, and a reload keeps them', async () => {
  const { page, problems } = await open();
  await pickPoint(page, 0.1, 'a');
  await pickPoint(page, 0.9, 'b');
  await page.waitForFunction(() => document.querySelector('#compare')?.dataset.dist === 'ready');
  const head = await page.$$eval('#compare .verdict-table th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(head, ['', 'series', 'metric', 'base', 'head', 'change', '95% interval', 'could detect', 'verdict']);
  const rows = await page.$$eval('#compare .verdict-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.equal(rows.length, 8, '4 series × P99, P50');
  for (const r of rows) {
    assert.match(r[5], /^[▲▼=] [+-]\d+\.\d%$/);
    assert.match(r[6], /^[+-]\d+\.\d% … [+-]\d+\.\d%$/);
    assert.match(r[7], /^≥ \+\d+\.\d%$/);
    assert.match(r[8], /^(regression|improvement|no change|inconclusive)$/);
  }
  assert.match(await page.locator('.compare-headline').textContent(), /^(❌ Regression|✅ No change|🟡 Inconclusive|✅ Improvement)/);
  assert.ok(await inkOf(page, '#compare .compare-dist canvas') > 500, 'both sides drawn on the distribution');
  const url = page.url();
  assert.match(url, /[?&]a=run_[^&]+&b=run_[^&]+/);
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#compare')?.dataset.dist === 'ready');
  assert.equal(page.url(), url);
  assert.deepEqual(await page.$$eval('#compare .verdict-table tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent))), rows);
  await page.screenshot({ path: join(SHOTS, 'compare.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('at 400 px nothing is wider than the screen; dark mode follows the system', async () => {
  const { page, problems } = await open('', { viewport: { width: 400, height: 860 }, colorScheme: 'dark' });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth) <= 400, 'no sideways scrolling');
  const [card] = await page.$$eval('#trends .card', (cs) => cs.map((c) => c.getBoundingClientRect().width));
  assert.ok(card > 300 && card <= 400, `one chart per row (${card} px)`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(20, 20, 24)');
  await page.screenshot({ path: join(SHOTS, 'phone-dark.png') });
  assert.deepEqual(problems, []);
  await page.close();
});
