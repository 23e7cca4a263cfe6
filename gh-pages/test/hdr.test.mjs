import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decode, encodeValues, valuesAtPercentiles, percentileLevels } from '../lib/hdr.mjs';

const golden = JSON.parse(readFileSync(new URL('./fixtures/hdr-golden.json', import.meta.url)));

test('decodes a Python hdrh histogram to the percentiles hdrh reports', () => {
  const h = decode(golden.data);
  assert.equal(h.totalCount, golden.total);
  assert.deepEqual(valuesAtPercentiles(h, golden.percentiles), golden.values_ns);
});

test("percentiles round the target count half up, as hdrh does, not up as the library's own rule", () => {
  // 4 samples: P30 is count 1.2 -> hdrh int(1.2 + 0.5) = 1 -> the first value; ceil(1.2) = 2 is the second.
  const h = decode(encodeValues([1, 2, 3, 4]));
  assert.deepEqual(valuesAtPercentiles(h, [30, 50, 100]), [1, 2, 4]);
  assert.equal(h.getValueAtPercentile(30), 2);
});

test('encodeValues then decode keeps every value in its own bucket', () => {
  const values = [1, 2, 999, 1000, 2047, 2048, 123456, 9_999_999, 59e9];
  const h = decode(encodeValues(values.flatMap((v) => [v, v, v])));
  assert.equal(h.totalCount, 27);
  for (const v of values) assert.equal(h.getCountAtValue(v), 3, `count at ${v}`);
  assert.deepEqual(valuesAtPercentiles(h, [0, 100]), [1, h.highestEquivalentValue(59e9)]);
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
