// HdrHistogram V2 codec ("hdr-v2-deflate-base64", the format of the result JSON's
// histogram.data): decode to counts, percentiles, encode (for the synthetic store).
// Layout, as written by HdrHistogram_c / Java / Python hdrh:
//   compressed: i32 cookie 0x1c849314 | i32 deflated length | zlib stream of:
//   header:     i32 cookie 0x1c849313 | i32 payload length | i32 normalizing offset
//               | i32 significant digits | i64 lowest | i64 highest | f64 int-to-double ratio
//   payload:    ZigZag LEB128 counts; a negative number n is a run of -n empty buckets.
import { deflateSync, inflateSync } from 'node:zlib';

const V2_COOKIE = 0x1c849303;
const V2_COMPRESSED_COOKIE = 0x1c849304;
const HEADER_BYTES = 40;

/** Bucket geometry of a histogram, as HdrHistogram computes it. */
export function geometry(lowest, highest, digits) {
  const largestSingleUnit = 2 * 10 ** digits;
  const subBucketCountMagnitude = Math.ceil(Math.log2(largestSingleUnit));
  const subBucketHalfCountMagnitude = Math.max(subBucketCountMagnitude, 1) - 1;
  const unitMagnitude = Math.floor(Math.log2(lowest));
  const subBucketCount = 2 ** (subBucketHalfCountMagnitude + 1);
  const subBucketHalfCount = subBucketCount / 2;
  // bucketCount: buckets needed to cover `highest`.
  let smallestUntrackable = BigInt(subBucketCount) << BigInt(unitMagnitude);
  let bucketCount = 1;
  while (smallestUntrackable <= BigInt(highest)) {
    if (smallestUntrackable > (1n << 62n)) { bucketCount += 1; break; }
    smallestUntrackable <<= 1n;
    bucketCount += 1;
  }
  const countsLen = (bucketCount + 1) * subBucketHalfCount;
  return { unitMagnitude, subBucketHalfCountMagnitude, subBucketHalfCount, subBucketCount, countsLen };
}

/** Lowest value and width of the value range that counts index `i` stands for. */
export function bucketOf(g, i) {
  let bucketIndex = (i >> g.subBucketHalfCountMagnitude) - 1;
  let subBucketIndex = (i & (g.subBucketHalfCount - 1)) + g.subBucketHalfCount;
  if (bucketIndex < 0) {
    subBucketIndex -= g.subBucketHalfCount;
    bucketIndex = 0;
  }
  const shift = bucketIndex + g.unitMagnitude;
  return { lowest: subBucketIndex * 2 ** shift, width: 2 ** shift };
}

function readZigZag(buf, pos) {
  // LEB128 over up to 9 bytes (the 9th carries 8 bits), then ZigZag; BigInt keeps 64 bits.
  let value = 0n;
  let shift = 0n;
  let i = pos;
  for (let n = 0; n < 9; n += 1) {
    const b = buf[i];
    i += 1;
    if (n === 8) { value |= BigInt(b) << shift; break; }
    value |= BigInt(b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7n;
  }
  const decoded = (value >> 1n) ^ -(value & 1n);
  return { value: Number(decoded), next: i };
}

function writeZigZag(out, n) {
  let v = (BigInt(n) << 1n) ^ (BigInt(n) >> 63n);
  v = BigInt.asUintN(64, v);
  for (let k = 0; k < 8; k += 1) {
    if (v < 0x80n) { out.push(Number(v)); return; }
    out.push(Number((v & 0x7fn) | 0x80n));
    v >>= 7n;
  }
  out.push(Number(v & 0xffn));
}

/** Decode a base64 V2 (compressed) histogram into {geometry, counts, total}. */
export function decode(base64) {
  const outer = Buffer.from(base64, 'base64');
  if (outer.length < 8 || (outer.readInt32BE(0) & ~0xf0) !== V2_COMPRESSED_COOKIE) {
    throw new Error('histogram is not HdrHistogram V2 compressed (bad cookie); expected format hdr-v2-deflate-base64');
  }
  const length = outer.readInt32BE(4);
  const inner = inflateSync(outer.subarray(8, 8 + length));
  if ((inner.readInt32BE(0) & ~0xf0) !== V2_COOKIE) {
    throw new Error('histogram payload has a bad V2 cookie');
  }
  const payloadLength = inner.readInt32BE(4);
  if (inner.readInt32BE(8) !== 0) throw new Error('histogram has a normalizing index offset; not supported');
  const digits = inner.readInt32BE(12);
  const lowest = Number(inner.readBigInt64BE(16));
  const highest = Number(inner.readBigInt64BE(24));
  const g = geometry(lowest, highest, digits);
  const counts = new Float64Array(g.countsLen);
  let pos = HEADER_BYTES;
  const end = HEADER_BYTES + payloadLength;
  let idx = 0;
  let total = 0;
  while (pos < end && idx < counts.length) {
    const { value, next } = readZigZag(inner, pos);
    pos = next;
    if (value < 0) {
      idx += -value;
    } else {
      counts[idx] = value;
      total += value;
      idx += 1;
    }
  }
  return { geometry: g, lowest, highest, digits, counts, total };
}

/** Encode counts (indexed as geometry(lowest, highest, digits)) as base64 V2 compressed. */
export function encode({ lowest, highest, digits, counts }) {
  const payload = [];
  let zeros = 0;
  let last = counts.length - 1;
  while (last >= 0 && counts[last] === 0) last -= 1;
  for (let i = 0; i <= last; i += 1) {
    if (counts[i] === 0) { zeros += 1; continue; }
    if (zeros > 0) { writeZigZag(payload, zeros === 1 ? 0 : -zeros); zeros = 0; }
    writeZigZag(payload, counts[i]);
  }
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeInt32BE(V2_COOKIE | 0x10, 0);
  header.writeInt32BE(payload.length, 4);
  header.writeInt32BE(0, 8);
  header.writeInt32BE(digits, 12);
  header.writeBigInt64BE(BigInt(lowest), 16);
  header.writeBigInt64BE(BigInt(highest), 24);
  header.writeDoubleBE(1.0, 32);
  const deflated = deflateSync(Buffer.concat([header, Buffer.from(payload)]));
  const outer = Buffer.alloc(8);
  outer.writeInt32BE(V2_COMPRESSED_COOKIE | 0x10, 0);
  outer.writeInt32BE(deflated.length, 4);
  return Buffer.concat([outer, deflated]).toString('base64');
}

/** Counts index of a value (for building histograms from samples). */
export function indexOf(g, value) {
  const v = Math.max(0, Math.floor(value));
  const mask = (g.subBucketCount - 1) * 2 ** g.unitMagnitude;
  const bitLength = (BigInt(v) | BigInt(mask)).toString(2).length;
  const bucketIndex = bitLength - g.unitMagnitude - (g.subBucketHalfCountMagnitude + 1);
  const subBucketIndex = Math.floor(v / 2 ** (bucketIndex + g.unitMagnitude));
  return ((bucketIndex + 1) << g.subBucketHalfCountMagnitude) + (subBucketIndex - g.subBucketHalfCount);
}

/**
 * Value at each percentile (0..100), as HdrHistogram reports it: the highest value
 * equivalent to the bucket where the cumulative count first reaches the percentile.
 */
export function valuesAtPercentiles(h, percentiles) {
  const out = [];
  const targets = percentiles.map((p) => Math.max(1, Math.floor((p / 100) * h.total + 0.5)));
  let cumulative = 0;
  let t = 0;
  const order = targets.map((c, k) => [c, k]).sort((a, b) => a[0] - b[0]);
  for (let i = 0; i < h.counts.length && t < order.length; i += 1) {
    cumulative += h.counts[i];
    while (t < order.length && cumulative >= order[t][0]) {
      const { lowest, width } = bucketOf(h.geometry, i);
      const p = percentiles[order[t][1]];
      out[order[t][1]] = p === 0 ? lowest : lowest + width - 1;
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
