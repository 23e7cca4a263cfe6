import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check } from '../lib/schema.mjs';
import { synthStore } from '../tools/synth-store.mjs';

// The Python side (scripts/tests/test_verdict_type.py) holds this schema to verdict.py's
// StoredVerdict and has the build read a verdict `hftbench history add` stored.
const SCHEMA = JSON.parse(readFileSync(new URL('../lib/stored-verdict.schema.json', import.meta.url)));
const BUILD = new URL('../build-src/build.mjs', import.meta.url).pathname;

const stored = () => ({
  status: 'regression', base: 'b'.repeat(40), partial: false, confidence: 0.95, looks: 1,
  flags: [{ scenario: 's', client: 'c', metric: 'p99_us', ratio: 1.2, verdict: 'regression' }],
  gated: [{ scenario: 's', client: 'c', metric: 'p99_us', ratio: 1.2, ci: [1.1, 1.3], mde: 1.05, verdict: 'regression' }],
  headline: '❌ Regression: s/c P99 +20.0%', columns: { icon: '', series: 'series' },
  rows: [{ scenario: 's', client: 'c', metric: 'p99_us', gated: true, verdict: 'regression', cells: { icon: '🔴', series: 's/c' } }],
});

test('a stored verdict fits the schema; an entry from before `gated` and the texts does too', () => {
  assert.deepEqual(check(SCHEMA, stored()), []);
  assert.deepEqual(check(SCHEMA, { status: 'no_change', base: null, flags: [] }), []);
});

test('what does not fit is named by its path', () => {
  const v = stored();
  v.gated[0].ci = '1.1..1.3';
  v.rows[0].cells.series = 3;
  v.surprise = true;
  delete v.status;
  assert.deepEqual(check(SCHEMA, v, 'verdict'), [
    'verdict: no status',
    'verdict.gated[0].ci: not array or null',
    'verdict.rows[0].cells.series: not string',
    'verdict: surprise is not a field of it',
  ]);
  assert.deepEqual(check(SCHEMA, { ...stored(), gated: [{ ...stored().gated[0], ci: [1] }] }), ['value.gated[0].ci: fewer than 2 items']);
});

test('the synthetic store writes verdicts of the schema, and the build warns of one that is not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'schema-'));
  try {
    const store = join(dir, 'store');
    synthStore({ out: store, commits: 30, scenarios: 2, clients: 2, suite: 'pr' });
    let r = spawnSync(process.execPath, [BUILD, '--store', store, '--out', join(dir, 'site')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /does not fit/);
    const index = JSON.parse(readFileSync(join(store, 'index.json'), 'utf8'));
    const month = index.suites.pr.shards.at(-1);
    const path = join(store, 'shards', 'pr', `${month}.json`);
    const shard = JSON.parse(readFileSync(path, 'utf8'));
    shard.runs.at(-1).verdict = { status: 'regression', base: 7 };
    writeFileSync(path, JSON.stringify(shard));
    r = spawnSync(process.execPath, [BUILD, '--store', store, '--out', join(dir, 'site2')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /its verdict does not fit lib\/stored-verdict\.schema\.json \(verdict\.base: not string or null\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
