// The compare view's data: two stored runs side by side, unjudged, and the command that judges them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as compare from '../site/js/compare.js';

const { abCommand, judgedAgainst, sideBySide } = compare;
const res = (client, p50, p99, extra = {}) => ({ scenario: 'latency-1c', client, p50_us: p50, p99_us: p99, p999_us: null, throughput_rps: 1000, ...extra });
const A = { commit: 'a'.repeat(40), results: [res('hft', 20, 40), res('go', 30, 60)] };
const B = { commit: 'b'.repeat(40), results: [res('hft', 20.5, 52), res('rust', 1, 2)] };

test('side by side: each stored value of both runs and the plain ratio B / A; nothing judged', () => {
  const { rows, onlyBase, onlyHead } = sideBySide(A, B);
  assert.deepEqual(rows.map((r) => [r.series, r.metric, r.base, r.head]), [
    ['latency-1c/hft', 'p50_us', 20, 20.5], ['latency-1c/hft', 'p99_us', 40, 52], ['latency-1c/hft', 'throughput_rps', 1000, 1000]],
  'P99.9 stored by neither side has no row');
  assert.ok(Math.abs(rows[1].ratio - 1.3) < 1e-12);
  assert.deepEqual(onlyBase, ['latency-1c/go']);
  assert.deepEqual(onlyHead, ['latency-1c/rust']);
  for (const r of rows) assert.deepEqual(Object.keys(r).sort(), ['base', 'head', 'label', 'metric', 'ratio', 'series'], 'no p-value, interval or verdict');
  assert.deepEqual(Object.keys(compare).sort(), ['SHOWN', 'abCommand', 'judgedAgainst', 'sideBySide'], 'no statistics exported');
});

test('one side without a value: shown, with no ratio', () => {
  const { rows } = sideBySide({ results: [res('hft', 20, null)] }, { results: [res('hft', 0, 41)] });
  assert.deepEqual(rows.filter((r) => r.metric !== 'throughput_rps').map((r) => [r.metric, r.base, r.head, r.ratio]), [['p50_us', 20, 0, 0], ['p99_us', null, 41, null]]);
});

test('the command that judges the pair names both commits; store text that is not a sha or suite stays out', () => {
  assert.equal(abCommand(A, B, 'standard'), `hftbench ab --base ${'a'.repeat(40)} --head ${'b'.repeat(40)} --suite standard`);
  assert.equal(abCommand({ commit: 'main; rm -rf ~' }, { commit: null }, '$(id)'), 'hftbench ab --base <commit of A> --head <commit of B>');
});

test('B\'s stored verdict judged the pair only when its base is A\'s commit', () => {
  assert.equal(judgedAgainst(A, { ...B, verdict: { status: 'no_change', base: A.commit } }), true);
  assert.equal(judgedAgainst(A, { ...B, verdict: { status: 'no_change', base: 'c'.repeat(40) } }), false);
  assert.equal(judgedAgainst(A, B), false);
  assert.equal(judgedAgainst({ commit: 'run_1' }, { verdict: { base: 'run_1' } }), false, 'a run id is no commit');
});
