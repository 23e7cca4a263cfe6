import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterRuns, visibleSeries, trends, changeMarkers, regressionFlags, latestRun, safeUrl, runnersOf, splitByRunner, trendLines } from '../site/js/series.js';
import { METRICS } from '../site/js/state.js';

const res = (client, p99) => ({ scenario: 'large', client, p50_us: p99 / 2, p99_us: p99 });
const runs = [
  { run_id: 'r2', commit: 'bbbbbbbb22', date: '2026-11-02T00:00:00Z', branch: 'main', runner: 'a', results: [{ ...res('rust', 200), spread: { p99_us: [190, 210], p50_us: 'junk' } }, res('c', 300)] },
  { run_id: 'r1', commit: 'aaaaaaaa11', date: '2026-11-01T00:00:00Z', branch: 'main', runner: 'a', results: [res('rust', 100)] },
  { run_id: 'r3', date: '2026-11-03T00:00:00Z', branch: 'dev', runner: 'b', results: [res('rust', 900)],
    verdict: { status: 'regression', flags: [{ scenario: 'large', client: 'rust', metric: 'p99_us', verdict: 'regression' }] } },
];
const view = { scenario: 'all', client: 'all', branch: 'main', runner: 'all' };

test('filterRuns keeps the branch and runner, in date order', () => {
  assert.deepEqual(filterRuns(runs, view).map((r) => r.run_id), ['r1', 'r2']);
  assert.deepEqual(filterRuns(runs, { ...view, branch: 'all', runner: 'b' }).map((r) => r.run_id), ['r3']);
});

test('visibleSeries filters scenario and client', () => {
  const list = [{ scenario: 'large', client: 'rust' }, { scenario: 'large', client: 'c' }, { scenario: 'small', client: 'c' }];
  assert.deepEqual(visibleSeries(list, { ...view, client: 'c' }), list.slice(1));
  assert.deepEqual(visibleSeries(list, { ...view, scenario: 'small' }), list.slice(2));
});

test('trends: one x per run that measured the series', () => {
  const [rust, c] = trends(filterRuns(runs, view), [{ scenario: 'large', client: 'rust' }, { scenario: 'large', client: 'c' }], ['p99_us']);
  assert.deepEqual(rust.values.p99_us, [100, 200]);
  assert.deepEqual(c.values.p99_us, [300]);
  assert.deepEqual(c.runs.map((r) => r.run_id), ['r2']);
});

test('trends carry the stored spread per run (null where none or malformed): the noise band', () => {
  const [rust] = trends(filterRuns(runs, view), [{ scenario: 'large', client: 'rust' }], ['p50_us', 'p99_us']);
  assert.deepEqual(rust.spreads.p99_us, [null, [190, 210]]);
  assert.deepEqual(rust.spreads.p50_us, [null, null]);
});

test('the server memory per order chart: its stored field per run, null before it was stored', () => {
  const withMemory = runs.map((r) => (r.run_id === 'r2' ? { ...r, results: r.results.map((x) => ({ ...x, memory_bytes_per_order: 2.94 })) } : r));
  const [rust] = trends(filterRuns(withMemory, view), [{ scenario: 'large', client: 'rust' }], METRICS.memory_bytes_per_order.fields);
  assert.deepEqual(rust.values.memory_bytes_per_order, [null, 2.94]);
});

test('change points map to the x of their run; others are dropped', () => {
  const [rust] = trends(filterRuns(runs, view), [{ scenario: 'large', client: 'rust' }], ['p99_us']);
  const cps = { series: { 'standard/large/rust/p99_us': [{ run_id: 'r2', change_pct: 100 }, { run_id: 'gone', change_pct: 5 }] } };
  assert.deepEqual(changeMarkers(cps, 'standard', rust, 'p99_us'), [{ x: 1, runner: 'a', changePct: 100, before: undefined, after: undefined, range: 'aaaaaaa..bbbbbbb' }]);
  assert.deepEqual(changeMarkers(null, 'standard', rust, 'p99_us'), []);
});

// A pool: runners a and b take turns on one series, b 30 % faster; each has its own change point.
const pool = [1, 2, 3, 4, 5, 6].map((i) => ({
  run_id: `p${i}`, commit: `c${i}`.repeat(5), date: `2026-11-0${i}T00:00:00Z`, branch: 'main', runner: i % 2 ? 'a' : 'b',
  results: [res('rust', i % 2 ? 100 : 70)],
}));
const poolCps = { series: { 'standard/large/rust/p99_us': [
  { run_id: 'p3', runner: 'a', change_pct: 12 }, { run_id: 'p4', runner: 'b', change_pct: -8 }, { run_id: 'p5', change_pct: 30 },
] } };

test('runnersOf and splitByRunner: one trend per machine, in a fixed order', () => {
  const [rust] = trends(pool, [{ scenario: 'large', client: 'rust' }], ['p99_us']);
  assert.deepEqual(runnersOf([...pool].reverse().concat({ run_id: 'x' })), ['a', 'b', null]);
  const parts = splitByRunner(rust);
  assert.deepEqual(parts.map((t) => [t.runner, t.runs.map((r) => r.run_id), t.values.p99_us]),
    [['a', ['p1', 'p3', 'p5'], [100, 100, 100]], ['b', ['p2', 'p4', 'p6'], [70, 70, 70]]]);
  assert.deepEqual(parts[1].spreads.p99_us, [null, null, null]);
  assert.deepEqual(trendLines(rust, ['a', 'b', 'c']), ['a', 'b'], 'a line per runner that ran it');
  assert.deepEqual(trendLines(parts[1], ['a', 'b']), [undefined], 'one runner: one line, as ever');
});

test('change markers: the runner shown only, ranges from the same runner\'s previous run, old mixed entries only with one runner', () => {
  const [rust] = trends(pool, [{ scenario: 'large', client: 'rust' }], ['p99_us']);
  const all = changeMarkers(poolCps, 'standard', rust, 'p99_us', { runner: 'all', storeRunners: 2 });
  assert.deepEqual(all.map((m) => [m.x, m.runner, m.changePct, m.range]), [[2, 'a', 12, 'c1c1c1c..c3c3c3c'], [3, 'b', -8, 'c2c2c2c..c4c4c4c']],
    'the entry without a runner was found in both machines\' runs mixed: dropped');
  const [onB] = trends(filterRuns(pool, { branch: 'all', runner: 'b' }), [{ scenario: 'large', client: 'rust' }], ['p99_us']);
  assert.deepEqual(changeMarkers(poolCps, 'standard', onB, 'p99_us', { runner: 'b', storeRunners: 2 }).map((m) => [m.x, m.runner]), [[1, 'b']]);
  assert.deepEqual(changeMarkers(poolCps, 'standard', rust, 'p99_us', { runner: 'a', storeRunners: 2 }).map((m) => m.runner), ['a']);
  assert.deepEqual(changeMarkers(poolCps, 'standard', rust, 'p99_us', { runner: 'all', storeRunners: 1 }).map((m) => m.x), [2, 3, 4]);
});

test('regression flags of the gate mark their run, for their metric only', () => {
  const [rust] = trends(runs.filter((r) => r.runner === 'b'), [{ scenario: 'large', client: 'rust' }], ['p99_us', 'p50_us']);
  assert.deepEqual(regressionFlags(rust, 'p99_us'), [0]);
  assert.deepEqual(regressionFlags(rust, 'p50_us'), []);
});

test('latestRun prefers the run the index names', () => {
  assert.equal(latestRun(runs, 'r1').run_id, 'r1');
  assert.equal(latestRun(runs, 'missing').run_id, 'r3');
  assert.equal(latestRun([], 'x'), null);
});

test('safeUrl keeps http(s) only', () => {
  assert.equal(safeUrl('https://github.com/o/r/commit/abc'), 'https://github.com/o/r/commit/abc');
  assert.equal(safeUrl('javascript:alert(1)'), null);
  assert.equal(safeUrl(null), null);
});
