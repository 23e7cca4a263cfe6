// The site over the synthetic store (every run of 16 rounds: spreads, gate verdicts with their
// stored headline and rows, a bisect): noise bands, the stored verdicts rendered as stored, the
// compare view of two points side by side and unjudged, URL state, phone width, dark.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { synthStore } from '../tools/synth-store.mjs';
import { NOT_STORED } from '../site/js/verdict-rows.js';
import { watchedPage } from './helpers/browser.mjs';
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
  await card.locator('.plot .u-over').scrollIntoViewIfNeeded(); // the chart under the table may start below the fold
  const box = await card.locator('.plot .u-over').boundingBox();
  await page.mouse.move(box.x + box.width * fraction, box.y + box.height / 2);
  await page.mouse.click(box.x + box.width * fraction, box.y + box.height / 2);
  await card.locator(`.hover button[data-pick="${which}"]`).click();
}

/** Every run of the synthetic store, in store order. */
function storeRuns() {
  const shards = join(site.made.store, 'shards', 'standard');
  return readdirSync(shards).sort().flatMap((f) => JSON.parse(readFileSync(join(shards, f), 'utf8')).runs);
}
const cellTexts = (table) => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
const storedCells = (verdict) => verdict.rows.map((r) => Object.values(r.cells));

test('compare two points: side by side and unjudged, the command that would judge them, both distributions; a reload keeps them', async () => {
  const { page, problems } = await open();
  await pickPoint(page, 0.1, 'a');
  await pickPoint(page, 0.9, 'b');
  await page.waitForFunction(() => document.querySelector('#compare')?.dataset.dist === 'ready');
  const head = await page.$$eval('#compare .side-by-side th', (ths) => ths.map((t) => t.textContent));
  assert.deepEqual(head, ['series', 'metric', 'A (base)', 'B (head)', 'B / A']);
  const rows = await cellTexts(page.locator('#compare .side-by-side'));
  assert.equal(rows.length, 16, '4 series × P50, P99, P99.9, throughput');
  for (const r of rows) assert.match(r[4], /^\d+\.\d{3}$/, 'a plain ratio');
  assert.equal(await page.locator('#compare .verdict-table').count(), 0, 'no verdict: B was not judged against A');
  assert.doesNotMatch(await page.locator('#compare-body').textContent(), /interval|p-value|regression|no change|could detect/);
  const url = page.url();
  const [a, b] = ['a', 'b'].map((k) => storeRuns().find((r) => r.run_id === new URL(url).searchParams.get(k)));
  assert.equal(await page.locator('#compare .ab-command').textContent(), `hftbench ab --base ${a.commit} --head ${b.commit} --suite standard`);
  assert.ok(await inkOf(page, '#compare .compare-dist canvas') > 500, 'both sides drawn on the distribution');
  assert.match(url, /[?&]a=run_[^&]+&b=run_[^&]+/);
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#compare')?.dataset.dist === 'ready');
  assert.equal(page.url(), url);
  assert.deepEqual(await cellTexts(page.locator('#compare .side-by-side')), rows);
  await page.screenshot({ path: join(SHOTS, 'compare.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('stored verdicts render as stored: the latest run\'s headline and rows, and B\'s when it was judged against A', async () => {
  const runs = storeRuns();
  const [a, b] = runs.slice(-2);
  const { page, problems } = await open(`?a=${a.run_id}&b=${b.run_id}`);
  const latest = page.locator('#latest .latest-verdict');
  assert.equal(await latest.locator('.verdict-headline').textContent(), b.verdict.headline);
  assert.deepEqual(await latest.locator('.verdict-table th').allTextContents(), Object.values(b.verdict.columns));
  assert.deepEqual(await cellTexts(latest.locator('.verdict-table')), storedCells(b.verdict));
  assert.ok((await page.locator('#overview .latest').textContent()).includes(` · ${b.verdict.headline} · `), 'the header\'s latest main run');
  const pair = page.locator('#compare .pair-verdict');
  assert.equal(b.verdict.base, a.commit, 'the store judged each commit against the one before');
  assert.equal(await pair.locator('.verdict-headline').textContent(), b.verdict.headline);
  assert.deepEqual(await cellTexts(pair.locator('.verdict-table')), storedCells(b.verdict));
  const regressed = runs.find((r) => r.verdict.rows.some((row) => row.verdict === 'regression'));
  const row = regressed.verdict.rows.find((x) => x.verdict === 'regression');
  const item = page.locator(`#overview li[data-regression="${row.scenario}/${row.client}/${row.metric}"]`);
  assert.equal(await item.locator('strong').textContent(), `${row.cells.series} ${row.cells.metric} ${row.cells.change}`);
  assert.ok((await item.textContent()).includes(`(95% interval ${row.cells.interval})`));
  assert.deepEqual(problems, []);
  await page.close();
});

test('a store written before the rows were: the status word and a note, no verdict table, the table\'s change against the previous run', async () => {
  const { page, problems } = await watchedPage(chromium.browser);
  const strip = (v) => { if (v) { delete v.headline; delete v.columns; delete v.rows; } };
  await page.route('**/derived/trend/**', async (route) => {
    const shard = await (await route.fetch()).json();
    for (const run of shard.runs) strip(run.verdict);
    await route.fulfill({ json: shard });
  });
  // The publish step derives the open regressions from such entries without their texts.
  await page.route('**/derived/open-*.json', async (route) => {
    const doc = await (await route.fetch()).json();
    for (const o of doc.open) o.cells = null;
    await route.fulfill({ json: doc });
  });
  await page.goto(`${server.url}?a=${storeRuns().at(-2).run_id}&b=${storeRuns().at(-1).run_id}`);
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  const status = storeRuns().at(-1).verdict.status;
  assert.equal(await page.locator('#latest .latest-verdict .verdict-headline').textContent(), `${status} (${NOT_STORED})`);
  assert.equal(await page.locator('.verdict-table').count(), 0);
  assert.ok((await page.locator('#overview .latest').textContent()).includes(`${status} (${NOT_STORED})`));
  const item = page.locator('#overview .regressions li').first();
  assert.match(await item.locator('strong').textContent(), /^\S+\/\S+ p\d+(\.\d)?: regression$/);
  assert.ok((await item.textContent()).includes(NOT_STORED));
  const changes = page.locator('#series-table td.change');
  assert.equal(await changes.locator('sub').count(), await changes.count(), 'every change is the plain ratio to the previous run');
  assert.equal(await page.locator('#compare .pair-verdict .verdict-headline').textContent(), `${status} (${NOT_STORED})`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('at 400 px nothing is wider than the screen; dark mode follows the system', async () => {
  const { page, problems } = await open('', { viewport: { width: 400, height: 860 }, colorScheme: 'dark' });
  const [scrollWidth, clientWidth] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
  assert.ok(scrollWidth <= clientWidth, `no sideways scrolling (${scrollWidth} px in ${clientWidth})`);
  const [card] = await page.$$eval('#trends .card', (cs) => cs.map((c) => c.getBoundingClientRect().width));
  assert.ok(card > 300 && card <= 400, `one chart per row (${card} px)`);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(20, 20, 24)');
  await page.screenshot({ path: join(SHOTS, 'phone-dark.png') });
  assert.deepEqual(problems, []);
  await page.close();
});

// The synthetic store's pool: runner ids sort AMD first (solid lines), Intel second (dashed).
const [AMD_ID, INTEL_ID] = ['7e8f9a0b1c2d', 'a1b2c3d4e5f6'];
const AMD = `AMD EPYC 9275F 24-Core Processor · ${AMD_ID}`;
const INTEL = `Intel(R) Core(TM) i7-14700K · ${INTEL_ID}`;
const ONE_SERIES = '?metric=p99_us&range=all&scenario=small&client=python';

/** Every text drawn on a canvas (uPlot's ticks, the change point labels), with its y: recorded from the page's start. */
function recordCanvasText() {
  window.canvasTexts = [];
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function record(text, x, y, ...rest) {
    window.canvasTexts.push({ text: String(text), y });
    return fillText.call(this, text, x, y, ...rest);
  };
}
const drawnTexts = async (page, pattern) => [...new Map((await page.evaluate(() => window.canvasTexts))
  .filter((t) => pattern.test(t.text)).map((t) => [`${t.text}@${t.y}`, t])).values()];
const RANGE = /^[0-9a-f]{7}\.\.[0-9a-f]{7}$/;

/**
 * Read from the store: each runner's change point of small × python P99 and the commit range
 * its label must give, from that runner's previous run (the other runner's runs between do not count).
 */
function storeRanges() {
  const store = site.made.store;
  const cps = JSON.parse(readFileSync(join(store, 'changepoints.json'), 'utf8')).series['standard/small/python/p99_us'];
  const shards = join(store, 'shards', 'standard');
  const runs = readdirSync(shards).sort().flatMap((f) => JSON.parse(readFileSync(join(shards, f), 'utf8')).runs);
  return new Map(cps.map((cp) => {
    const own = runs.filter((r) => r.runner === cp.runner);
    const i = own.findIndex((r) => r.run_id === cp.run_id);
    return [cp.runner, `${own[i - 1].commit.slice(0, 7)}..${own[i].commit.slice(0, 7)}`];
  }));
}

/**
 * Of 40 strips (12 px wide, so a dashed line shows in each) across the first chart, how many
 * cross the P99 line colour in exactly two places: two runners' lines one above the other. One
 * line, zig-zagging between the machines or not, crosses once. The top 30 px of the plot hold
 * the change point labels, in the same colour: not scanned.
 */
const twoLineStrips = (page) => page.$eval('#trends .card canvas', (c) => {
  const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
  // COLORS[0] #1f77b4, opaque: the line, not its translucent band.
  const hit = (x, y) => {
    const i = 4 * (y * c.width + x);
    return data[i + 3] > 200 && Math.abs(data[i] - 0x1f) + Math.abs(data[i + 1] - 0x77) + Math.abs(data[i + 2] - 0xb4) < 90;
  };
  const top = c.parentElement.querySelector('.u-over').offsetTop + 30;
  let strips = 0;
  for (let k = 0; k < 40; k += 1) {
    const x0 = Math.round(c.width * (0.2 + (0.6 * k) / 39));
    let crossings = 0; let inside = false;
    for (let y = top; y < c.height; y += 1) {
      let any = false;
      for (let x = x0; x < x0 + 12 && !any; x += 1) any = hit(x, y);
      if (any && !inside) crossings += 1;
      inside = any;
    }
    if (crossings === 2) strips += 1;
  }
  return strips;
});

test('two runners side by side: a line and a label per runner, each runner\'s own change points, a row per runner', async () => {
  const { page, problems } = await open(ONE_SERIES, { init: recordCanvasText });
  const card = page.locator('#trends .card');
  assert.equal(await card.count(), 1);
  assert.equal(await card.getAttribute('data-lines'), '2');
  assert.deepEqual(await card.locator('.key.runners .rk').allTextContents(), [AMD, INTEL]);
  assert.deepEqual(await card.locator('.key.runners .rk').evaluateAll((ks) => ks.map((k) => getComputedStyle(k, '::before').borderTopStyle)), ['solid', 'dashed']);
  const two = await twoLineStrips(page);
  assert.ok(two >= 30, `two separate lines across the chart (${two} of 40 strips cross two)`);
  const ranges = storeRanges();
  assert.deepEqual([...ranges.keys()].sort(), [AMD_ID, INTEL_ID], 'the store has a change point per runner');
  assert.equal((await drawnTexts(page, /^p99 [+-]\d+\.\d%$/)).length, 2, 'a size per runner');
  const drawn = await drawnTexts(page, RANGE);
  assert.deepEqual(drawn.map((t) => t.text).sort(), [...ranges.values()].sort(), 'each runner\'s own commit range');
  const yOf = (id) => drawn.find((t) => t.text === ranges.get(id)).y;
  assert.ok(yOf(AMD_ID) < yOf(INTEL_ID), 'a label row per runner, in the key\'s order');
  const tags = await page.locator('#series-table tbody tr[data-series="small/python"] .runner-tag').allTextContents();
  assert.deepEqual(tags.sort(), [AMD, INTEL]);
  await page.locator('#trends .card').screenshot({ path: join(SHOTS, 'two-runners.png') });
  assert.deepEqual(problems, []);
  await page.close();
});

test('one runner chosen: one line, no runner key or tags, only that runner\'s change point', async () => {
  const { page, problems } = await open(`${ONE_SERIES}&runner=${INTEL_ID}`, { init: recordCanvasText });
  const card = page.locator('#trends .card');
  assert.equal(await card.getAttribute('data-lines'), '1');
  assert.equal(await card.locator('.key.runners').count(), 0);
  assert.equal(await page.locator('#series-table .runner-tag').count(), 0);
  const two = await twoLineStrips(page);
  assert.ok(two <= 4, `one line (${two} of 40 strips cross two)`);
  const labels = await drawnTexts(page, /^p99 /);
  assert.deepEqual(labels.map((t) => t.text.split(' ').at(-1)), [storeRanges().get(INTEL_ID)], 'the chosen runner\'s change point only');
  assert.deepEqual(problems, []);
  await page.close();
});

test('at 400 px the page never scrolls sideways, nor does the series table: one runner, two side by side', async () => {
  for (const query of [`?runner=${INTEL_ID}`, '', '?range=all', ONE_SERIES]) {
    const { page, problems } = await open(query, { viewport: { width: 400, height: 860 } });
    // clientWidth, not innerWidth: innerWidth counts the vertical scrollbar, so a page as wide as
    // the window still scrolls sideways by the scrollbar's width
    const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    assert.ok(scroll <= inner, `${query}: page ${scroll} px wide in a ${inner} px viewport (scrollbar excluded)`);
    const [table, wrap] = await page.$eval('#series', (w) => [w.scrollWidth, w.clientWidth]);
    assert.ok(table <= wrap, `${query}: series table ${table} px in ${wrap} px: a scrollbar under it`);
    const widest = await page.$$eval('#filters select, #trends .card, .key.runners', (es) => Math.max(...es.map((e) => e.getBoundingClientRect().right)));
    assert.ok(widest <= inner, `${query}: a filter, chart or runner key ends at ${widest} px`);
    if (query === '') await page.screenshot({ path: join(SHOTS, 'phone-two-runners.png'), fullPage: false });
    assert.deepEqual(problems, [], query);
    await page.close();
  }
});

test('creep: under a gated series\' trend, its lines since the reference push, named; none under a series never gated', async () => {
  const { page, problems } = await open('', { init: recordCanvasText });
  const creep = page.locator('#trends .card[data-series="small/python"] .creep');
  await creep.locator('canvas').waitFor();
  // No creep reference in this store's index: the oldest push of main, named with its date.
  const [first] = storeRuns();
  assert.equal(await creep.getAttribute('data-reference'), first.commit);
  assert.equal(await creep.locator('h4').textContent(), `Creep since ${first.commit.slice(0, 7)} · ${first.date.slice(0, 10)}`);
  assert.match(await creep.locator('.legend').textContent(), /^Reference: the oldest push of main here \(no creep reference set\)\. .*Band: its 95 % interval, the gate's level .*Orange dashed: the gate's threshold \+10 %\.$/);
  assert.deepEqual(await creep.locator('.key .k').allTextContents(), ['— P50', '— P99']);
  assert.match(await creep.locator('.creep-now').textContent(), /^Latest push [0-9a-f]{7}: P50 ×\d\.\d\d \(×\d\.\d\d … ×\d\.\d\d, 399 links\) · P99 /);
  assert.equal(await creep.getAttribute('data-breaks'), '0', 'every push of this store was compared with the one before');
  assert.equal(await creep.locator('.creep-break').count(), 0);
  assert.doesNotMatch(await creep.textContent(), /\[object /);
  assert.ok(await inkOf(page, '#trends .card[data-series="small/python"] .creep canvas') > 2000, 'lines, band and threshold drawn');
  assert.ok((await drawnTexts(page, /^gate \+10%$/)).length >= 1, 'the threshold named on the chart');
  // medium × python was never gated: no creep lines to draw.
  await page.locator('#trends .card[data-series="medium/python"]').scrollIntoViewIfNeeded();
  await page.locator('#trends .card[data-series="medium/python"] .plot canvas').waitFor();
  assert.equal(await page.locator('#trends .card[data-series="medium/python"] .creep canvas').count(), 0);
  await creep.screenshot({ path: join(SHOTS, 'creep.png') });
  assert.deepEqual(problems, []);
  await page.close();
});

test('creep without the build\'s file: from the loaded runs; a push stored without a verdict breaks the chain, and the page says so', async () => {
  const { page, problems } = await watchedPage(chromium.browser);
  await page.route('**/derived/creep-*.json', (route) => route.fulfill({ status: 404, body: '' }));
  let broken = null;
  await page.route('**/derived/trend/**', async (route) => {
    const shard = await (await route.fetch()).json();
    // The newest shard: its middle run stored without a verdict (not compared).
    if (!broken && shard.runs.length > 2) {
      broken = shard.runs[Math.floor(shard.runs.length / 2)];
      broken.verdict = null;
    }
    await route.fulfill({ json: shard });
  });
  await page.goto(`${server.url}?scenario=small&client=python`);
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  const creep = page.locator('#trends .card .creep');
  await creep.locator('canvas').waitFor();
  // The oldest push of main the page loaded (the default range: the 3 newest months) is the reference.
  const months = [...new Set(storeRuns().map((r) => r.date.slice(0, 7)))].sort();
  const oldest = storeRuns().find((r) => r.date.slice(0, 7) === months.at(-3));
  assert.equal(await creep.getAttribute('data-reference'), oldest.commit);
  assert.equal(await creep.locator('h4').textContent(), `Creep since ${oldest.commit.slice(0, 7)} · ${oldest.date.slice(0, 10)}`);
  assert.equal(await creep.getAttribute('data-breaks'), '1');
  assert.deepEqual(await creep.locator('.creep-break').allTextContents(),
    [`Chain broken at ${broken.commit.slice(0, 10)} (${broken.date.slice(0, 10)}): it has no verdict (not compared with the push before it); the lines start again there at ×1.00.`]);
  assert.doesNotMatch(await creep.textContent(), /\[object /);
  await creep.screenshot({ path: join(SHOTS, 'creep-broken.png') });
  // The browser logs the creep file's 404 itself (a site built before the build derived it); nothing else.
  assert.deepEqual(problems, ['console: Failed to load resource: the server responded with a status of 404 (Not Found)']);
  await page.close();
});
