import { test } from 'node:test';
import assert from 'node:assert/strict';
import { filterRuns, visibleSeries, trends, changeMarkers, regressionFlags, latestRun, safeUrl } from '../site/js/series.js';

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

test('change points map to the x of their run; others are dropped', () => {
  const [rust] = trends(filterRuns(runs, view), [{ scenario: 'large', client: 'rust' }], ['p99_us']);
  const cps = { series: { 'standard/large/rust/p99_us': [{ run_id: 'r2', change_pct: 100 }, { run_id: 'gone', change_pct: 5 }] } };
  assert.deepEqual(changeMarkers(cps, 'standard', rust, 'p99_us'), [{ x: 1, changePct: 100, before: undefined, after: undefined, range: 'aaaaaaa..bbbbbbb' }]);
  assert.deepEqual(changeMarkers(null, 'standard', rust, 'p99_us'), []);
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
