import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns, logSd, probit } from '../site/js/compare.js';
import { headline, rowCells } from '../site/js/verdict-rows.js';

const res = (client, p50, p99, spread = 0.02) => ({
  scenario: 'latency-1c', client, p50_us: p50, p99_us: p99, p999_us: p99 * 2,
  spread: spread === null ? undefined : { p50_us: [p50 * (1 - spread), p50 * (1 + spread)], p99_us: [p99 * (1 - spread), p99 * (1 + spread)] },
});

test('probit: the normal quantiles the gate uses', () => {
  assert.ok(Math.abs(probit(0.975) - 1.959964) < 1e-6);
  assert.ok(Math.abs(probit(0.005) + 2.575829) < 1e-6);
  assert.ok(Math.abs(probit(0.5)) < 1e-12);
});

test('a 30 % slower P99 with tight spreads is a regression; an unchanged P50 is "no change"', () => {
  const base = { results: [res('hft', 20, 40)] };
  const head = { results: [res('hft', 20.1, 52)] };
  const doc = compareRuns(base, head);
  const byMetric = Object.fromEntries(doc.results.map((r) => [r.metric, r]));
  assert.equal(byMetric.p99_us.verdict, 'regression');
  assert.equal(byMetric.p50_us.verdict, 'no_change');
  assert.equal(doc.status, 'regression');
  assert.equal(headline(doc), '❌ Regression: latency-1c/hft P99 +30.0%');
  assert.deepEqual(rowCells(byMetric.p99_us).slice(0, 6), ['🔴', 'latency-1c/hft', 'P99', '40.0 µs', '52.0 µs', '▲ +30.0%']);
  assert.ok(byMetric.p99_us.mde > 1 && byMetric.p99_us.mde < 1.1, 'tight spreads see a few percent');
  assert.deepEqual(doc.notJudged.map((n) => n.metric), ['p999_us'], 'no spread is stored for P99.9');
});

test('wide spreads: the same 30 % is inconclusive, never a regression', () => {
  const doc = compareRuns({ results: [res('hft', 20, 40, 0.4)] }, { results: [res('hft', 20, 52, 0.4)] });
  assert.equal(doc.results.find((r) => r.metric === 'p99_us').verdict, 'inconclusive');
});

test('one-round runs and one-sided series are listed as not judged, with the reason', () => {
  const doc = compareRuns({ results: [res('hft', 20, 40, null), res('go', 30, 60)] }, { results: [res('hft', 20, 52, null), res('rust', 1, 2)] });
  assert.deepEqual(doc.results, []);
  assert.equal(doc.status, 'inconclusive');
  assert.ok(doc.notJudged.some((n) => n.series === 'latency-1c/hft' && /one round/.test(n.reason)));
  assert.ok(doc.notJudged.some((n) => n.series === 'latency-1c/go' && /one run only/.test(n.reason)));
  assert.ok(doc.notJudged.some((n) => n.series === 'latency-1c/rust' && /one run only/.test(n.reason)));
});

test('logSd reads a 95 % spread, refuses broken ones', () => {
  assert.ok(Math.abs(logSd([Math.exp(-1.959964), Math.exp(1.959964)]) - 1) < 1e-6);
  assert.equal(logSd(null), null);
  assert.equal(logSd([0, 3]), null);
});
