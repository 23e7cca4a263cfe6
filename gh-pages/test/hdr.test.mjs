import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decode, encode, geometry, indexOf, valuesAtPercentiles, percentileLevels, bucketOf } from '../lib/hdr.mjs';

const golden = JSON.parse(readFileSync(new URL('./fixtures/hdr-golden.json', import.meta.url)));

test('decodes a Python hdrh histogram to the percentiles hdrh reports', () => {
  const h = decode(golden.data);
  assert.equal(h.total, golden.total);
  assert.deepEqual(valuesAtPercentiles(h, golden.percentiles), golden.values_ns);
});

test('encode then decode keeps every count', () => {
  const g = geometry(1, 60e9, 3);
  const counts = new Float64Array(g.countsLen);
  for (const v of [1, 2, 999, 1000, 2047, 2048, 123456, 9_999_999, 59e9]) counts[indexOf(g, v)] += 3;
  const h = decode(encode({ lowest: 1, highest: 60e9, digits: 3, counts }));
  assert.deepEqual(Array.from(h.counts), Array.from(counts));
  assert.equal(h.total, 27);
});

test('indexOf and bucketOf agree: a value falls inside its own bucket', () => {
  const g = geometry(1, 60e9, 3);
  for (const v of [0, 1, 2047, 2048, 4097, 1e6 + 7, 3.3e9]) {
    const { lowest, width } = bucketOf(g, indexOf(g, v));
    assert.ok(lowest <= v && v < lowest + width, `${v} not in [${lowest}, ${lowest + width})`);
  }
});

test('rejects a string that is not a V2 compressed histogram, naming the format', () => {
  assert.throws(() => decode(Buffer.from('not a histogram').toString('base64')), /hdr-v2-deflate-base64/);
});

test('percentile levels halve the tail and stop where the samples run out', () => {
  const levels = percentileLevels(1000, 1);
  assert.deepEqual(levels.slice(0, 4), [0, 50, 75, 87.5]);
  assert.equal(levels.at(-1), 100);
  // 1000 samples: the last level below 100 still leaves >= 1 sample above it.
  assert.ok((1 - levels.at(-2) / 100) * 1000 >= 1);
});
