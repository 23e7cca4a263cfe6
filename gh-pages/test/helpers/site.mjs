// A store built into the site, served from loopback, and headless Chromium: what every browser
// suite starts before its tests and closes after them.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from '../../build-src/build.mjs';
import { launch } from './browser.mjs';
import { serve } from './serve.mjs';

/** Screenshots of the browser suites (gh-pages/test-output/). */
export const SHOTS = new URL('../../test-output/', import.meta.url).pathname;

/**
 * makeStore(tmp) writes a history store under tmp and returns { store, ...anything else };
 * that return value is `made`. close() stops the browser and the server and removes tmp.
 */
export async function startSite(prefix, makeStore) {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  const site = { tmp, server: null, chromium: null };
  site.close = async () => {
    await site.chromium?.close();
    await site.server?.close();
    rmSync(tmp, { recursive: true, force: true });
  };
  try {
    mkdirSync(SHOTS, { recursive: true });
    site.made = makeStore(tmp);
    build({ store: site.made.store, out: join(tmp, 'site') });
    site.server = await serve(join(tmp, 'site'));
    site.chromium = await launch();
  } catch (err) {
    await site.close();
    throw err;
  }
  return site;
}
