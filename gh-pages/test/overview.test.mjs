import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bisectText, dateLabels, latestMainRun, openRegressions, recentChangePoints, runnerLabel, seriesRows, slimOpen, sortRows } from '../site/js/overview.js';
import { splitByRunner, trends } from '../site/js/series.js';

const gated = (verdict, ratio, metric = 'p99_us', client = 'hft') => ({ scenario: 'latency-1c', client, metric, ratio, ci: [ratio - 0.02, ratio + 0.02], mde: 1.06, verdict });
const run = (id, date, verdict, branch = 'main', p99 = 40) => ({
  run_id: id, date, commit: `${id}sha`, branch, verdict,
  results: [{ scenario: 'latency-1c', client: 'hft', p50_us: p99 / 2, p99_us: p99, p999_us: p99 * 2 }],
});
const BISECT = { status: 'culprit', good: 'g'.repeat(40), bad: 'b'.repeat(40), culprit: { sha: 'c'.repeat(40), subject: 'order book: copy the level' }, reason: 'bisected 5 commits' };
const runs = [
  run('r1', '2026-11-01T00:00:00Z', { status: 'no_change', gated: [gated('no_change', 1.0)] }),
  run('r2', '2026-11-02T00:00:00Z', { status: 'regression', bisect: BISECT, gated: [gated('regression', 1.2), gated('regression', 1.3, 'p50_us')] }, 'main', 48),
  run('r3', '2026-11-03T00:00:00Z', { status: 'regression', gated: [gated('regression', 1.25, 'p99_us', 'c')] }, 'feature'),
  run('r4', '2026-11-04T00:00:00Z', { status: 'inconclusive', partial: true, gated: [gated('no_change', 1.0)] }, 'main', 47),
  run('r5', '2026-11-05T00:00:00Z', { status: 'improvement', gated: [gated('improvement', 0.8, 'p50_us'), gated('inconclusive', 1.04)] }, 'main', 50),
];

test('open regressions: flagged on main, closed only by a later improvement (as regression-issue closes its issue)', () => {
  const open = openRegressions(runs);
  assert.deepEqual(open.map((o) => o.key), ['latency-1c/hft/p99_us'], 'P50 recovered in r5; the partial r4 changes nothing; r3 is not main');
  assert.equal(open[0].run.run_id, 'r2');
  assert.equal(open[0].bisect.culprit.subject, 'order book: copy the level');
  const later = (v, d) => run(`r${d}`, `2026-11-0${d}T00:00:00Z`, { status: v, gated: [gated(v, v === 'improvement' ? 0.85 : 1.01)] });
  assert.equal(openRegressions(runs.concat(later('no_change', 6))).length, 1, '"no change" against the slow commit: still slow');
  assert.deepEqual(openRegressions(runs.concat(later('no_change', 6), later('improvement', 7))), []);
});

test('a store with flags only (no gated rows) still opens and closes', () => {
  const old = [run('a', '2026-11-01T00:00:00Z', { status: 'regression', flags: [gated('regression', 1.2)] }),
    run('b', '2026-11-02T00:00:00Z', { status: 'improvement', flags: [gated('improvement', 0.8)] })];
  assert.equal(openRegressions(old.slice(0, 1)).length, 1);
  assert.equal(openRegressions(old).length, 0);
});

test('bisect: the culprit, else the range with its reason', () => {
  assert.match(bisectText(BISECT).text, /^culprit cccccccccc order book: copy the level$/);
  assert.equal(bisectText({ status: 'between', good: 'g'.repeat(40), bad: 'b'.repeat(40), culprit: null, reason: 'build failed at 2 commits' }).text,
    'between gggggggggg (good) and bbbbbbbbbb (bad): build failed at 2 commits');
  assert.equal(bisectText(null), null);
});

test('latest main run skips other branches', () => {
  assert.equal(latestMainRun(runs.slice(0, 3)).run_id, 'r2');
  assert.equal(latestMainRun([runs[2]]).run_id, 'r3');
  assert.equal(latestMainRun([]), null);
});

test('change points of the last 30 days, newest first, with the commit before them', () => {
  const cps = { series: {
    'standard/latency-1c/hft/p99_us': [{ run_id: 'r2', commit: 'r2sha', date: '2026-11-02T00:00:00Z', change_pct: 20 }, { run_id: 'old', date: '2026-09-01T00:00:00Z', change_pct: 5 }],
    'standard/latency-1c/hft/p50_us': [{ run_id: 'r5', commit: 'r5sha', date: '2026-11-05T00:00:00Z', change_pct: -20 }],
    'other/latency-1c/hft/p99_us': [{ run_id: 'r5', date: '2026-11-05T00:00:00Z', change_pct: 1 }],
  } };
  const got = recentChangePoints(cps, 'standard', '2026-11-06T00:00:00Z', runs);
  assert.deepEqual(got.map((c) => [c.metric, c.change_pct, c.from_commit]), [['p50_us', -20, 'r4sha'], ['p99_us', 20, 'r1sha']]);
  assert.deepEqual(recentChangePoints({ series: Object.create(null) }, 'constructor', '2026-11-06T00:00:00Z', runs), []);
  assert.deepEqual(recentChangePoints(null, 'standard', '2026-11-06T00:00:00Z', runs), []);
});

test('change points on a pool: the runner shown, each with its runner and that runner\'s previous commit', () => {
  const pool = ['a', 'b', 'a', 'b', 'a', 'b'].map((runner, i) => ({ ...run(`q${i + 1}`, `2026-11-0${i + 1}T00:00:00Z`, null), runner }));
  const cps = { series: { 'standard/latency-1c/hft/p99_us': [
    { run_id: 'q3', runner: 'a', commit: 'q3sha', date: '2026-11-03T00:00:00Z', change_pct: 15 },
    { run_id: 'q4', runner: 'b', commit: 'q4sha', date: '2026-11-04T00:00:00Z', change_pct: 14 },
    { run_id: 'q5', commit: 'q5sha', date: '2026-11-05T00:00:00Z', change_pct: 40 },
  ] } };
  const until = '2026-11-06T00:00:00Z';
  const all = recentChangePoints(cps, 'standard', until, pool, 30, { runner: 'all', storeRunners: 2 });
  assert.deepEqual(all.map((c) => [c.run_id, c.runner, c.from_commit]), [['q4', 'b', 'q2sha'], ['q3', 'a', 'q1sha']], 'the mixed entry is dropped');
  assert.deepEqual(recentChangePoints(cps, 'standard', until, pool, 30, { runner: 'a', storeRunners: 2 }).map((c) => c.run_id), ['q3']);
  assert.deepEqual(recentChangePoints(cps, 'standard', until, pool, 30).map((c) => [c.run_id, c.runner]), [['q5', 'a'], ['q4', 'b'], ['q3', 'a']],
    'one runner in the store: an entry without one is its');
});

test('series rows per runner: each against its own previous run; an open regression marks every runner\'s row', () => {
  const pool = ['a', 'b', 'a', 'b'].map((runner, i) => ({ ...run(`q${i + 1}`, `2026-11-0${i + 1}T00:00:00Z`, null, 'main', runner === 'a' ? 100 + i : 70 + i), runner }));
  pool[2].verdict = { status: 'regression', gated: [gated('regression', 1.2)] };
  const [t] = trends(pool, [{ scenario: 'latency-1c', client: 'hft' }], ['p50_us', 'p99_us', 'p999_us']);
  // As the page reads them from derived/open-<suite>.json: slimmed, the runner that flagged it kept.
  const open = openRegressions(pool).map(slimOpen);
  assert.equal(open[0].run.runner, 'a');
  const rows = seriesRows(splitByRunner(t), open);
  assert.deepEqual(rows.map((r) => [r.runner, r.spark, r.status]), [['a', [100, 102], 'regression'], ['b', [71, 73], 'regression']]);
  assert.ok(Math.abs(rows[1].ratio - 73 / 71) < 1e-12, 'b against b, not against a');
  assert.deepEqual(sortRows([...rows].reverse(), 'name').map((r) => r.runner), ['a', 'b']);
});

// The texts `history add` stores for a row (verdict_text.py renders them; the page only shows them).
const storedRows = (verdict) => ({
  ...verdict,
  headline: `stored headline of ${verdict.status}`,
  columns: { change: 'change', interval: '95% interval', could_detect: 'could detect' },
  rows: verdict.gated.map((g) => ({ ...g, gated: true, cells: { series: `${g.scenario}/${g.client}`, metric: g.metric.toUpperCase(), change: `stored change ${g.ratio}`, interval: 'stored interval', could_detect: 'stored mde' } })),
});

test('open regressions carry the row\'s stored texts; entries stored before carry none', () => {
  const withRows = runs.map((r) => (r.verdict ? { ...r, verdict: storedRows(r.verdict) } : r));
  const [o] = openRegressions(withRows);
  assert.deepEqual([o.cells.change, o.cells.interval, o.interval_label], ['stored change 1.2', 'stored interval', '95% interval']);
  assert.deepEqual(slimOpen(o).cells, o.cells, 'kept in derived/open-<suite>.json');
  const [old] = openRegressions(runs);
  assert.equal(old.cells, null);
  assert.equal(old.verdict, 'regression', 'the status word is still there');
});

test('series rows: latest values, change against the baseline verdict (stored texts) or the previous run, sortable', () => {
  const main = runs.filter((r) => r.branch === 'main');
  const latest = { ...main.at(-1), verdict: storedRows(main.at(-1).verdict) };
  const [t] = trends([...main.slice(0, -1), latest], [{ scenario: 'latency-1c', client: 'hft' }], ['p50_us', 'p99_us', 'p999_us']);
  const [row] = seriesRows([t], openRegressions(main));
  assert.deepEqual(row.spark, [40, 48, 47, 50]);
  assert.equal(row.p99_us, 50);
  assert.equal(row.ratio, 1.04, 'the latest verdict\'s P99 ratio, to sort by');
  assert.deepEqual([row.change_text, row.detect_text], ['stored change 1.04', 'stored mde'], 'its texts as stored');
  assert.equal(row.against, 'baseline');
  assert.equal(row.status, 'regression', 'an open regression outranks the latest verdict');
  const [old] = seriesRows([trends(main, [{ scenario: 'latency-1c', client: 'hft' }], ['p50_us', 'p99_us', 'p999_us'])[0]], []);
  assert.ok(Math.abs(old.ratio - 50 / 47) < 1e-12, 'no stored texts: the plain ratio to the previous run');
  assert.deepEqual([old.against, old.change_text, old.detect_text, old.status], ['previous run', null, null, 'inconclusive']);
  const [plain] = seriesRows(trends(main.slice(0, 1).concat(run('x', '2026-11-09T00:00:00Z', null, 'main', 44)), [{ scenario: 'latency-1c', client: 'hft' }], ['p50_us', 'p99_us', 'p999_us']), []);
  assert.ok(Math.abs(plain.ratio - 1.1) < 1e-12);
  assert.equal(plain.against, 'previous run');
  assert.equal(plain.status, 'unjudged');
  const rows = [{ scenario: 's', client: 'a', ratio: 1.0, status: 'no_change' }, { scenario: 's', client: 'b', ratio: 1.3, status: 'regression' }, { scenario: 's', client: 'c', ratio: null, status: 'unjudged' }];
  assert.deepEqual(sortRows(rows, 'change').map((r) => r.client), ['b', 'a', 'c']);
  assert.deepEqual(sortRows(rows, '-change').map((r) => r.client), ['c', 'a', 'b']);
  assert.deepEqual(sortRows(rows, 'status').map((r) => r.client), ['b', 'a', 'c'], 'regressions first, unjudged last');
});

test('date labels fit the range: times within a day, dates within months, months beyond', () => {
  assert.equal(dateLabels(['2026-11-23T10:00:00Z', '2026-11-23T11:30:00Z']).label('2026-11-23T11:30:00Z'), '11:30');
  assert.equal(dateLabels(['2026-09-01T00:00:00Z', '2026-11-23T00:00:00Z']).label('2026-11-23T00:00:00Z'), '11-23');
  assert.equal(dateLabels(['2024-11-01T00:00:00Z', '2026-11-23T00:00:00Z']).label('2026-11-23T00:00:00Z'), '2026-11');
});
