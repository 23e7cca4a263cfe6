import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseView, serializeView, shardsFor, storeProblem, choices, monthOfRun } from '../site/js/state.js';

const index = {
  schema_version: 1,
  suites: {
    standard: { shards: ['2026-09', '2026-11', '2026-10', '2026-08'], series: [{ scenario: 'large', client: 'rust' }, { scenario: 'small', client: 'c' }] },
    quick: { shards: ['2026-11'], series: [{ scenario: 'small', client: 'go' }] },
  },
  branches: ['main', 'feature/x'],
  runners: { abc123: { cpu_model: 'i7' } },
};

test('defaults: standard suite, main branch, all series, latency, 3 months', () => {
  assert.deepEqual(parseView('', index), { suite: 'standard', scenario: 'all', client: 'all', metric: 'latency', branch: 'main', runner: 'all', range: '3m', a: '', b: '', sort: 'status' });
});

test('a view survives its own URL', () => {
  const view = { suite: 'standard', scenario: 'large', client: 'rust', metric: 'p99_us', branch: 'feature/x', runner: 'abc123', range: 'all', a: 'run_20261101T000000Z', b: '', sort: 'change' };
  assert.deepEqual(parseView(serializeView(view), index), view);
});

test('unknown values fall back to defaults; a client of another suite is dropped', () => {
  const v = parseView('?suite=quick&client=rust&metric=bogus&range=99y', index);
  assert.equal(v.suite, 'quick');
  assert.equal(v.client, 'all');
  assert.equal(v.metric, 'latency');
  assert.equal(v.range, '3m');
  assert.deepEqual(choices(index, 'quick').client, ['all', 'go']);
});

test('shards: newest first, as many months as the range', () => {
  assert.deepEqual(shardsFor(index, 'standard', '3m'), ['2026-11', '2026-10', '2026-09']);
  assert.deepEqual(shardsFor(index, 'standard', 'all'), ['2026-11', '2026-10', '2026-09', '2026-08']);
  assert.deepEqual(shardsFor(index, 'nope', '3m'), []);
});

test('a newer or broken store is refused with a message that says why', () => {
  assert.equal(storeProblem(index), null);
  assert.match(storeProblem({ ...index, schema_version: 2 }), /schema_version 2, newer than this dashboard/);
  assert.match(storeProblem({ suites: {} }), /no integer schema_version/);
  assert.match(storeProblem(null), /not a JSON object/);
});

test('?suite=constructor and other Object.prototype names are not suites', () => {
  for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const v = parseView(`?suite=${name}&client=${name}`, index);
    assert.equal(v.suite, 'standard', name);
    assert.equal(v.client, 'all', name);
    assert.deepEqual(shardsFor(index, name, '3m'), [], name);
    assert.deepEqual(choices(index, name).scenario, ['all'], name);
  }
});

test('the compared runs and the sort survive the URL; junk ids are dropped', () => {
  const v = parseView('?a=run_20261101T000000Z&b=run_20261102T000000Z_2&sort=change', index);
  assert.equal(v.a, 'run_20261101T000000Z');
  assert.equal(v.b, 'run_20261102T000000Z_2');
  assert.deepEqual(parseView(serializeView(v), index), v);
  const junk = parseView('?a=<script>&b=%20&sort=evil', index);
  assert.deepEqual([junk.a, junk.b, junk.sort], ['', '', 'status']);
  assert.equal(monthOfRun('run_20261122T030000Z_xss'), '2026-11');
  assert.equal(monthOfRun('adhoc'), null);
});
