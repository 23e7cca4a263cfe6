// The compare view's table against bench-config/testdata/verdict-rows.json, the same fixture
// scripts/tests/test_verdict_rows_fixture.py checks verdict_text.py and gates.yaml against.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { GATES, classify, headline, rowCells, tableHead } from '../site/js/verdict-rows.js';

const fixture = JSON.parse(readFileSync(new URL('../../bench-config/testdata/verdict-rows.json', import.meta.url)));
const revive = (r) => ({ ...r, mde: r.mde === 'inf' ? Infinity : r.mde });

test('the gated metrics, thresholds and confidence are those of gates.yaml', () => {
  assert.deepEqual(GATES, fixture.gates);
});

test('table head and every row: the cells verdict_text.py writes', () => {
  assert.deepEqual(tableHead(GATES.confidence), fixture.table_head);
  for (const { input, cells } of fixture.rows) assert.deepEqual(rowCells(revive(input)), cells, JSON.stringify(input));
});

test('headlines: the line verdict_text.py writes', () => {
  for (const { input, headline: expected } of fixture.headlines) {
    assert.equal(headline({ ...input, results: input.results.map(revive) }), expected);
  }
});

test('classify: the verdicts of verdict_rules.classify', () => {
  for (const { verdict, ...input } of fixture.classify) {
    const ci = input.ci.map((x) => (x === null ? NaN : x));
    assert.equal(classify({ ...input, ci }), verdict, JSON.stringify(input));
  }
});
