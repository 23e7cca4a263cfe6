#!/usr/bin/env node
// Screenshots of the dashboard at 1400 px and 400 px (phone), light and dark, for a person to
// look at: the first screen, the whole page, the compare view, one series over the whole store,
// and its creep since the reference.
//   node tools/screenshots.mjs [--store DIR] [--out DIR] [--commits 600]
// Without --store a synthetic store is made (tools/synth-store.mjs) whose first series creeps: +0.7 %
// at each of the last 60 pushes, the index's creep_reference 80 pushes back, one push 70 back stored
// without a verdict (the chain breaks there). Headless Debian chromium.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from '../build-src/build.mjs';
import { synthStore } from './synth-store.mjs';
import { launch } from '../test/helpers/browser.mjs';
import { serve } from '../test/helpers/serve.mjs';

const { values } = parseArgs({
  options: { store: { type: 'string' }, out: { type: 'string', default: 'test-output/screenshots' }, commits: { type: 'string', default: '600' } },
});
const out = resolve(values.out);
mkdirSync(out, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'hft-shots-'));
let server; let chromium;
try {
  let store = values.store && resolve(values.store);
  if (!store) {
    store = join(tmp, 'store');
    synthStore({ out: store, commits: +values.commits, scenarios: 10, clients: 5, creep: { pushes: 60, step: 1.007, reference: 80, uncompared: 70 } });
  }
  build({ store, out: join(tmp, 'site') });
  server = await serve(join(tmp, 'site'));
  chromium = await launch();
  for (const [name, width, height] of [['1400', 1400, 900], ['400', 400, 860]]) {
    for (const scheme of ['light', 'dark']) {
      const page = await chromium.browser.newPage({ viewport: { width, height }, colorScheme: scheme });
      await page.goto(server.url);
      await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 60_000 });
      await page.screenshot({ path: join(out, `${name}-${scheme}-first-screen.png`) });
      if (scheme === 'light') {
        // Charts below the fold are drawn when scrolled to: scroll through the page first.
        for (let y = 0; y < await page.evaluate(() => document.body.scrollHeight); y += height / 2) {
          await page.evaluate((to) => window.scrollTo(0, to), y);
          await page.waitForTimeout(30);
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.screenshot({ path: join(out, `${name}-${scheme}-full.png`), fullPage: true });
      }
      // The compare view of the two newest runs, as a link would open it.
      await page.locator('#compare summary').click();
      const ids = await page.$$eval('#pick-a option', (os) => os.map((o) => o.value).filter(Boolean));
      const [b, a] = ids;
      if (a && b) {
        await page.goto(`${page.url()}&a=${a}&b=${b}`);
        await page.waitForFunction(() => document.querySelector('#compare')?.dataset.dist === 'ready', null, { timeout: 60_000 });
        await page.locator('#compare').screenshot({ path: join(out, `${name}-${scheme}-compare.png`) });
      }
      if (scheme === 'light') {
        // One series over the whole store: a pool draws a line and change points per runner.
        const [scenario, client] = (await page.$eval('#trends .card', (c) => c.dataset.series)).split('/');
        await page.goto(`${server.url}?range=all&scenario=${encodeURIComponent(scenario)}&client=${encodeURIComponent(client)}`);
        await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 60_000 });
        await page.locator('#trends .card').first().screenshot({ path: join(out, `${name}-${scheme}-series.png`) });
        // Its creep since the reference (drawn when the store's verdicts gated the series).
        const creep = page.locator('#trends .card .creep[data-drawn="true"]').first();
        if (await creep.count()) await creep.screenshot({ path: join(out, `${name}-${scheme}-creep.png`) });
      }
      await page.close();
    }
  }
  process.stdout.write(`screenshots: ${out}\n`);
} finally {
  await chromium?.close();
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
}
