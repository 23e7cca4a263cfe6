import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveLatest, deriveOpen, percentileCurve, runCurves, slimShard } from '../build-src/derive.mjs';
import { synthStore } from '../tools/synth-store.mjs';

const golden = JSON.parse(readFileSync(new URL('./fixtures/hdr-golden.json', import.meta.url)));
const BUILD = new URL('../build-src/build.mjs', import.meta.url).pathname;

test('percentile curve: rising, from the minimum to the maximum, in µs', () => {
  const curve = percentileCurve(golden.data);
  assert.deepEqual(curve[0], [0, golden.min / 1000]);
  assert.equal(curve.at(-1)[0], 100);
  assert.ok(Math.abs(curve.at(-1)[1] - golden.max / 1000) / (golden.max / 1000) < 0.001);
  for (let i = 1; i < curve.length; i += 1) assert.ok(curve[i][1] >= curve[i - 1][1]);
});

test('slim shards drop histograms and keep everything else', () => {
  const shard = { schema_version: 1, runs: [{ run_id: 'r', results: [{ client: 'c', p99_us: 5, histogram: 'HIST' }] }] };
  assert.deepEqual(slimShard(shard).runs[0].results, [{ client: 'c', p99_us: 5 }]);
  assert.equal(shard.runs[0].results[0].histogram, 'HIST', 'the store shard is not modified');
});

test('the latest run is the one the index names, found in the newest shard holding it', () => {
  const runs = { '2026-10': [{ run_id: 'a', results: [] }], '2026-11': [{ run_id: 'b', results: [{ scenario: 's', client: 'c', histogram: golden.data }] }] };
  const latest = deriveLatest('quick', { shards: ['2026-10', '2026-11'], latest_run: 'b' }, (m) => runs[m]);
  assert.equal(latest.run_id, 'b');
  assert.ok(latest.percentiles['s/c'].length > 10);
  const warnings = [];
  const broken = { '2026-11': [{ run_id: 'b', results: [{ scenario: 's', client: 'c', histogram: 'bm90IGEgaGlzdG9ncmFt' }] }] };
  assert.deepEqual(deriveLatest('quick', { shards: ['2026-11'], latest_run: 'b' }, (m) => broken[m], (w) => warnings.push(w)).percentiles, {});
  assert.match(warnings[0], /suite quick, run b, s\/c: .*curve left out/);
});

test('build assembles site, uPlot, data and derived files', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'hft-build-'));
  try {
    synthStore({ out: join(tmp, 'store'), commits: 40, scenarios: 2, clients: 2 });
    execFileSync('node', [BUILD, '--store', join(tmp, 'store'), '--out', join(tmp, 'site')]);
    for (const f of ['index.html', 'js/app.js', 'vendor/uPlot.esm.js', 'vendor/LICENSE', 'data/index.json', 'derived/latest-standard.json', '.nojekyll', 'derived/curves/standard/run_20241101T000000Z_00000.json']) {
      assert.ok(existsSync(join(tmp, 'site', f)), f);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('build refuses a store newer than it, naming the file and the fix', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'hft-build-'));
  try {
    mkdirSync(join(tmp, 'store'));
    writeFileSync(join(tmp, 'store', 'index.json'), JSON.stringify({ schema_version: 2, suites: {} }));
    const r = spawnSync('node', [BUILD, '--store', join(tmp, 'store'), '--out', join(tmp, 'site')], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /index\.json has schema_version 2; this build reads 1: update gh-pages\//);
    assert.ok(!existsSync(join(tmp, 'site')), 'nothing written');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('run curves: coarse percentiles of every series, cached by histogram, unsafe ids skipped', () => {
  const cache = new Map();
  const run = { run_id: 'run_20261101T000000Z', results: [{ scenario: 's', client: 'a', histogram: golden.data }, { scenario: 's', client: 'b', histogram: golden.data }] };
  const curves = runCurves(run, cache);
  assert.equal(cache.size, 1);
  const a = curves.percentiles['s/a'];
  assert.deepEqual(a, curves.percentiles['s/b']);
  assert.deepEqual(a.map(([p]) => p).slice(0, 3), [0, 25, 50]);
  assert.equal(a.at(-1)[0], 100);
  for (let i = 1; i < a.length; i += 1) assert.ok(a[i][1] >= a[i - 1][1]);
  assert.ok(a.every(([p]) => p === 100 || (1 - p / 100) * golden.total >= 1), 'no level beyond the samples');
  assert.equal(runCurves({ run_id: '../etc', results: [] }), null);
});

test('open regressions are derived over the whole store, by the rule of the page', () => {
  const v = (status, verdict, extra = {}) => ({ status, gated: [{ scenario: 's', client: 'c', metric: 'p99_us', ratio: 1.2, verdict }], ...extra });
  const runs = [
    { run_id: 'a', date: '2025-01-01T00:00:00Z', branch: 'main', commit: 'a'.repeat(40), results: [{ histogram: 'big' }], verdict: v('regression', 'regression', { bisect: { status: 'between', good: 'g', bad: 'b', culprit: null, reason: 'r' } }) },
    { run_id: 'b', date: '2025-06-01T00:00:00Z', branch: 'main', commit: 'b'.repeat(40), results: [], verdict: v('no_change', 'no_change') },
  ];
  const open = deriveOpen('standard', runs);
  assert.equal(open.open.length, 1);
  assert.deepEqual(open.open[0].run, { run_id: 'a', date: '2025-01-01T00:00:00Z', commit: 'a'.repeat(40) }, 'the run without its results');
  assert.equal(open.open[0].bisect.status, 'between');
});

test('build refuses suite and month names that are paths, writing nothing', () => {
  for (const suites of [{ '../../outside': { shards: ['2026-11'] } }, { quick: { shards: ['../../outside'] } }]) {
    const tmp = mkdtempSync(join(tmpdir(), 'hft-build-'));
    try {
      mkdirSync(join(tmp, 'store'));
      writeFileSync(join(tmp, 'store', 'index.json'), JSON.stringify({ schema_version: 1, suites }));
      const r = spawnSync('node', [BUILD, '--store', join(tmp, 'store'), '--out', join(tmp, 'a', 'b', 'site')], { encoding: 'utf8' });
      assert.equal(r.status, 2);
      assert.match(r.stderr, /is not (a plain name|YYYY-MM)/);
      assert.ok(!existsSync(join(tmp, 'a')), 'nothing written');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
});

test('the creep lines are derived over the whole store, from the index\'s creep_reference or --creep-reference', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'hft-build-'));
  try {
    const store = join(tmp, 'store');
    synthStore({ out: store, commits: 120, scenarios: 2, clients: 2, gated: 2, runners: 1, creep: { pushes: 60, step: 1.007, reference: 80, uncompared: 70 } });
    const index = JSON.parse(readFileSync(join(store, 'index.json'), 'utf8'));
    const read = () => JSON.parse(readFileSync(join(tmp, 'site', 'derived', 'creep-standard.json'), 'utf8')).creep;
    execFileSync('node', [BUILD, '--store', store, '--out', join(tmp, 'site')]);
    const creep = read();
    assert.equal(creep.reference.commit, index.creep_reference, 'the index names the reference');
    assert.equal(creep.reference.found, true);
    assert.equal(creep.pushes.length, 80, 'the reference (80 commits back) and the 79 pushes after it');
    assert.equal(creep.segments.length, 2, 'the push stored without a verdict breaks the chain');
    assert.equal(creep.segments[1].start, 10);
    const [p50] = creep.series.filter((s) => s.key === 'small/python p50_us');
    assert.ok(p50.ratio.at(-1) > 1.45 && p50.ratio.at(-1) < 1.6, `60 pushes at +0.7 %: ${p50.ratio.at(-1)}`);
    assert.ok(p50.lo.at(-1) > 1.10);
    // A build flag names another reference (before the break: two segments still).
    const earlier = JSON.parse(readFileSync(join(store, 'shards', 'standard', `${creep.pushes[0].date.slice(0, 7)}.json`), 'utf8'));
    execFileSync('node', [BUILD, '--store', store, '--out', join(tmp, 'site'), '--creep-reference', earlier.runs[0].commit.slice(0, 12)]);
    assert.equal(read().reference.commit, earlier.runs[0].commit);
    const bad = spawnSync('node', [BUILD, '--store', store, '--out', join(tmp, 'other'), '--creep-reference', 'v1.4'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /creep reference "v1\.4" is not a 7 to 40 digit lowercase hex sha/);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
