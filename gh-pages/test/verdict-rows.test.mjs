// The stored verdict as the page reads it: the texts `hftbench history add` stored (rendered by
// verdict_text.py; scripts/tests/store/test_history.py checks they equal its summary's), passed through
// unchanged; an entry stored before the rows were gives its status word and says so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { NOT_STORED, columnLabel, storedRow, verdictLine, verdictTable } from '../site/js/verdict-rows.js';

// As history add writes it (docs/history-store.md).
const STORED = {
  status: 'regression', base: 'b'.repeat(40), partial: false, flags: [], gated: [],
  headline: '❌ Regression: latency-1c/hft P99 +16.1%',
  columns: { icon: '', series: 'series', metric: 'metric', base: 'base', head: 'head', change: 'change', interval: '95% interval', could_detect: 'could detect', verdict: 'verdict' },
  rows: [
    { scenario: 'latency-1c', client: 'hft', metric: 'p99_us', gated: true, verdict: 'regression',
      cells: { icon: '🔴', series: 'latency-1c/hft', metric: 'P99', base: '57.6 µs', head: '66.9 µs', change: '▲ +16.1%', interval: '+10.6% … +21.6%', could_detect: '≥ +7.3%', verdict: 'regression' } },
    { scenario: 'small', client: 'rust', metric: 'errors', gated: false, verdict: 'no_change',
      cells: { icon: '▫️', series: 'small/rust', metric: 'error rate', base: '0%', head: '0%', change: '=', interval: '–', could_detect: '–', verdict: 'no change' } },
  ],
};

test('the stored headline and every stored cell, in the stored columns\' order, unchanged', () => {
  assert.equal(verdictLine(STORED), STORED.headline);
  const table = verdictTable(STORED);
  assert.deepEqual(table.head, ['', 'series', 'metric', 'base', 'head', 'change', '95% interval', 'could detect', 'verdict']);
  assert.deepEqual(table.rows.map((r) => r.cells), STORED.rows.map((r) => Object.values(r.cells)));
  assert.deepEqual(table.rows.map((r) => [r.metric, r.gated, r.verdict]), [['p99_us', true, 'regression'], ['errors', false, 'no_change']]);
  assert.equal(storedRow(STORED, 'latency-1c', 'hft', 'p99_us').cells.change, '▲ +16.1%');
  assert.equal(columnLabel(STORED, 'interval'), '95% interval');
});

test('a column the gate adds later shows with no change here; a cell it lacks is empty', () => {
  const wider = { ...STORED, columns: { ...STORED.columns, p_value: 'p' }, rows: [STORED.rows[0]] };
  const table = verdictTable(wider);
  assert.equal(table.head.at(-1), 'p');
  assert.equal(table.rows[0].cells.at(-1), '');
});

test('an entry stored before the rows were: the status word and a note, no table', () => {
  const old = { status: 'no_change', base: 'b'.repeat(40), partial: false, flags: [], gated: [] };
  assert.equal(verdictLine(old), `no_change (${NOT_STORED})`);
  assert.equal(verdictTable(old), null);
  assert.equal(storedRow(old, 'latency-1c', 'hft', 'p99_us'), null);
  assert.equal(columnLabel(old, 'interval'), null);
  assert.equal(verdictLine(null), null);
});

test('store keys are data: "constructor" finds no prototype property', () => {
  const hostile = { ...STORED, columns: { constructor: 'c' }, rows: [{ scenario: 's', cells: {} }] };
  assert.deepEqual(verdictTable(hostile).rows[0].cells, ['']);
  assert.equal(columnLabel(STORED, 'constructor'), null);
});

test('no page module holds a verdict rule or a statistic of its own', () => {
  const dir = new URL('../site/js/', import.meta.url);
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
    const code = readFileSync(new URL(name, dir), 'utf8');
    assert.doesNotMatch(code, /\b(probit|classify|logSd|GATES|HEADLINE|mde)\b/, `${name} repeats the gate's rules`);
  }
});
