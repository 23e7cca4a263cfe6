// The published site, served from loopback, in headless Chromium, over a store made by real
// hftbench runs. Screenshots go to gh-pages/test-output/.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { watchedPage } from './helpers/browser.mjs';
import { CULPRIT_SUBJECT, realStore, XSS } from './helpers/real-store.mjs';
import { inkOf, open as openPage } from './helpers/page.mjs';
import { SHOTS, startSite } from './helpers/site.mjs';

let site; let server; let chromium; let clients; let scenario;

before(async () => {
  site = await startSite('hft-dashboard-', realStore);
  ({ server, chromium } = site);
  ({ clients, scenario } = site.made);
});

after(async () => {
  await site?.close();
});

const open = (query = '', options = {}) => openPage(chromium.browser, server.url, query, options);

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

test('the header: the open regression with its culprit as text, the latest main run, the runner', async () => {
  const { page, problems } = await open();
  const header = page.locator('#overview');
  assert.equal(await header.locator('.health').getAttribute('data-open'), '1');
  assert.match(await header.locator('.health').textContent(), /main \(quick\): 1 open regression/);
  const item = header.locator(`li[data-regression="${scenario}/${clients[0]}/p99_us"]`);
  // The texts `hftbench history add` stored, rendered by verdict_text.py: the page formats none.
  assert.equal(await item.locator('strong').textContent(), `${scenario}/${clients[0]} P99 ▲ +30.0%`);
  assert.ok((await item.textContent()).includes('(95% interval +22.0% … +38.0%) since '));
  assert.match(await item.locator('.bisect').textContent(), /^culprit cccccccccc order book: <b>copy<\/b> the level$/);
  assert.ok((await item.textContent()).includes(CULPRIT_SUBJECT), 'the subject is text, markup and all');
  assert.equal(await header.locator('b').count(), 0, 'no element made from the subject');
  assert.match(await header.locator('.latest').textContent(), /Latest main run: [0-9a-f]{10} · \d{4}-\d\d-\d\d \d\d:\d\d UTC · no gate verdict stored/);
  assert.match(await header.locator('.runner-line').textContent(), /^Runner [0-9a-f]{12}: .+ cores · kernel /);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the table: one row per series, the regressed one first and red; a click opens its chart', async () => {
  const { page, problems } = await open();
  const rows = page.locator('#series-table tbody tr');
  assert.equal(await rows.count(), clients.length);
  assert.equal(await rows.first().getAttribute('data-series'), `${scenario}/${clients[0]}`);
  assert.equal(await rows.first().getAttribute('data-status'), 'regression');
  assert.equal(await rows.first().locator('.dot.s-regression').count(), 1);
  await page.locator('#series-table button[data-sort="name"]').click();
  assert.match(page.url(), /sort=name/);
  const last = rows.last();
  const series = await last.getAttribute('data-series');
  await last.click();
  const card = page.locator(`#trends .card[data-series="${series}"]`);
  await page.waitForFunction((s) => document.querySelector(`#trends .card.focus[data-series="${s}"]`), series);
  assert.equal(await card.getAttribute('data-drawn'), 'true');
  assert.ok(await card.isVisible());
  assert.deepEqual(problems, []);
  await page.close();
});

test('two stored runs side by side, unjudged, with the command that would judge them; the link keeps the pair', async () => {
  const { page, problems } = await open();
  await page.locator('#compare summary').click();
  // The pickers are filled when the view opens (its toggle event), not at the click itself.
  await page.waitForFunction(() => [...document.querySelectorAll('#pick-a option')].filter((o) => o.value).length > 0);
  const ids = await page.$$eval('#pick-a option', (os) => os.map((o) => o.value).filter(Boolean)); // newest first
  assert.equal(ids.length, 3);
  const [single, rounds] = [ids[2], ids[1]];
  await page.selectOption('#pick-a', single);
  await page.selectOption('#pick-b', rounds);
  await page.waitForFunction(() => document.querySelector('#compare')?.dataset.state === 'ready');
  assert.equal(await page.locator('.compare-headline').textContent(), 'Two stored runs side by side: not a verdict');
  const rows = await page.locator('#compare .side-by-side tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.equal(rows.length, 4 * clients.length, 'P50, P99, P99.9 and throughput of each series');
  for (const r of rows) assert.match(r[4], /^(\d+\.\d{3}|–)$/);
  assert.equal(await page.locator('#compare .verdict-table').count(), 0, 'the stored verdict of B was not against A: not shown');
  const shards = join(site.made.store, 'shards', 'quick');
  const stored = readdirSync(shards).flatMap((f) => JSON.parse(readFileSync(join(shards, f), 'utf8')).runs);
  const commit = (id) => stored.find((r) => r.run_id === id).commit;
  assert.equal(await page.locator('#compare .ab-command').textContent(), `hftbench ab --base ${commit(single)} --head ${commit(rounds)} --suite quick`);
  assert.match(page.url(), new RegExp(`[?&]a=${single}&b=${rounds}(&|$)`));
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#compare')?.dataset.state === 'ready');
  assert.equal(await page.inputValue('#pick-a'), single);
  assert.equal(await page.inputValue('#pick-b'), rounds);
  assert.ok(await page.locator('#compare').evaluate((d) => d.open), 'a link with a pair opens the compare view');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a commit message with markup shows as text and runs nothing', async () => {
  const { page, problems } = await open();
  assert.equal(await page.locator('#latest .runline .message').textContent(), XSS);
  // Hover the last point of a trend: the detail line shows the same message as text.
  const box = await page.locator('#trends .card .u-over').first().boundingBox();
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  await page.waitForFunction((x) => document.querySelector('#trends .card .hover')?.textContent.includes(x), XSS);
  assert.equal(await page.locator('img').count(), 0, 'no <img> element was created');
  await page.waitForTimeout(200); // an onerror handler would have fired by now
  await page.screenshot({ path: join(SHOTS, 'xss-as-text.png'), fullPage: true });
  assert.deepEqual(problems, [], 'no alert dialog, no error');
  await page.close();
});

test('?suite=constructor and other prototype names fall back to a real suite, without errors', async () => {
  for (const query of ['?suite=constructor', '?suite=__proto__&client=constructor&a=constructor&b=toString', '?suite=hasOwnProperty&runner=constructor']) {
    const { page, problems } = await open(query);
    assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready', query);
    assert.equal(await page.inputValue('#f-suite'), 'quick', query);
    assert.equal(await page.locator('#trends .card').count(), clients.length, query);
    assert.deepEqual(problems, [], query);
    await page.close();
  }
});

test('a filter changes the view and the URL, and the URL brings the view back', async () => {
  const { page, problems } = await open();
  const client = clients.at(-1);
  await page.selectOption('#f-client', client);
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  assert.match(page.url(), new RegExp(`[?&]client=${client}(&|$)`));
  assert.deepEqual(await page.locator('#trends .card').evaluateAll((cs) => cs.map((c) => c.dataset.series)), [`${scenario}/${client}`]);
  await page.selectOption('#f-metric', 'throughput_rps');
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  assert.match(page.url(), /metric=throughput_rps/);
  const link = page.url();
  await page.close();

  const again = await open(link.slice(server.url.length));
  assert.equal(await again.page.inputValue('#f-client'), client);
  assert.equal(await again.page.inputValue('#f-metric'), 'throughput_rps');
  assert.equal(await again.page.locator('#trends .card').count(), 1);
  assert.deepEqual([...problems, ...again.problems], []);
  await again.page.close();
});

test('a store newer than the dashboard is refused with a clear message', async () => {
  const { page } = await watchedPage(chromium.browser);
  await page.route('**/data/index.json', (route) => route.fulfill({ json: { schema_version: 2, suites: {} } }));
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.state === 'error');
  assert.match(await page.locator('#status').textContent(), /schema_version 2, newer than this dashboard/);
  await page.close();
});
