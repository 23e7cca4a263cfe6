// HdrHistogram for the publish step. hdr-histogram-js decodes and encodes the result JSON's
// histogram.data ("hdr-v2-deflate-base64"). Percentiles are read here rather than with its
// getValueAtPercentile: that one rounds the target count up (HdrHistogram Java), while hftbench
// reports Python hdrh's round-half-up: on the histograms of all six clients, closed and open loop,
// they disagree at 13-29 of the 68-85 curve levels, by up to 119 %. The dashboard shows report.md's
// numbers, so the rule here is hdrh's (equal at every level on the same histograms).
import hdr from 'hdr-histogram-js';

const FORMAT = 'hdr-v2-deflate-base64';

/** Decode a base64 V2 compressed histogram (64-bit counts). */
export function decode(base64) {
  try {
    return hdr.decodeFromCompressedBase64(base64, 64);
  } catch (err) {
    throw new Error(`histogram is not HdrHistogram V2 compressed (${err.message}); expected format ${FORMAT}`);
  }
}

/** Encode values (ns) as base64 V2 compressed, in hftbench's range: 1 ns to 60 s, 3 digits. */
export function encodeValues(values) {
  const h = hdr.build({ bitBucketSize: 64, lowestDiscernibleValue: 1, highestTrackableValue: 60e9, numberOfSignificantValueDigits: 3 });
  for (const v of values) h.recordValue(Math.max(0, Math.floor(v)));
  const base64 = hdr.encodeIntoCompressedBase64(h);
  h.destroy();
  return base64;
}

/** Python hdrh's target count of a percentile (get_target_count_at_percentile). */
function targetCount(percentile, total) {
  return Math.max(1, Math.floor((Math.min(percentile, 100) * total) / 100 + 0.5));
}

/**
 * Value at each percentile (0..100), as hdrh's get_value_at_percentile: the highest value
 * equivalent to the bucket where the cumulative count first reaches the target (the lowest for 0).
 */
export function valuesAtPercentiles(h, percentiles) {
  const out = [];
  const order = percentiles.map((p, k) => [targetCount(p, h.totalCount), k]).sort((a, b) => a[0] - b[0]);
  let cumulative = 0;
  let t = 0;
  for (let i = 0; i < h.countsArrayLength && t < order.length; i += 1) {
    cumulative += h.getCountAtIndex(i);
    while (t < order.length && cumulative >= order[t][0]) {
      const k = order[t][1];
      const value = h.valueFromIndex(i);
      out[k] = percentiles[k] === 0 ? h.lowestEquivalentValue(value) : h.highestEquivalentValue(value);
      t += 1;
    }
  }
  return out;
}

/** Percentile levels for a distribution plot: `ticks` per halving of the remaining tail. */
export function percentileLevels(total, ticks = 5) {
  const levels = [0];
  for (let k = 1; ; k += 1) {
    const p = 100 * (1 - 0.5 ** (k / ticks));
    if (p >= 100 || (1 - p / 100) * total < 1) break;
    levels.push(p);
  }
  levels.push(100);
  return levels;
}
