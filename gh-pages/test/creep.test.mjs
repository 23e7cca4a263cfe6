// The creep lines (site/js/creep.js): the product of main's per-push ratios from a reference,
// its interval from the links' stored intervals at each verdict's own level, and the chain
// broken where a push was not compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BAND_LEVEL, GATE_THRESHOLDS, creepLines, creepOf, linkSe, normalQuantile, slimCreep, zOf } from '../site/js/creep.js';

const sha = (i) => createHash('sha1').update(`push ${i}`).digest('hex');
const date = (i) => new Date(Date.UTC(2026, 9, 1) + i * 3600e3).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Push i of main: compared with push i − 1 (none for the first), one row per metric at `ratio`, ci ±`width`. */
function push(i, { ratio = 1.007, width = 0.01, confidence = 0.95, verdict = true, base = i > 0 ? sha(i - 1) : null, metrics = ['p50_us', 'p99_us'] } = {}) {
  const gated = metrics.map((metric) => ({ scenario: 'latency-1c', client: 'hft', metric, ratio, ci: [ratio * (1 - width), ratio * (1 + width)], mde: 1.05, verdict: 'no_change' }));
  gated.push({ scenario: 'latency-1c', client: 'hft', metric: 'errors', ratio: 1, ci: [0, 0.001], mde: 0.001, verdict: 'no_change' });
  return {
    run_id: `run_${i}`, date: date(i), commit: sha(i), branch: 'main',
    verdict: verdict && base ? { status: 'no_change', base, partial: false, confidence, flags: [], gated } : null,
  };
}

const approx = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} not within ${tol} of ${b}`);

test('normal quantiles: z at 95 %, 99 % and 98.33 %', () => {
  approx(normalQuantile(0.975), 1.959963985, 1e-8, 'z 95 %');
  approx(zOf(0.99), 2.575829304, 1e-8, 'z 99 %');
  approx(zOf(1 - 0.05 / 3), 2.393979, 1e-5, 'z 98.33 %');
  approx(normalQuantile(0.001), -3.090232306, 1e-8, 'low tail');
  assert.equal(zOf(0), 0);
});

test('60 pushes at +0.7 % each: ×1.52 at the last push, its band above the gate', () => {
  const runs = Array.from({ length: 61 }, (_, i) => push(i));
  const creep = creepLines(runs.reverse()); // any order in
  assert.equal(creep.reference.commit, sha(0), 'no reference named: the oldest push');
  assert.equal(creep.reference.found, false);
  assert.equal(creep.pushes.length, 61);
  assert.deepEqual(creep.segments.map((s) => s.start), [0], 'one unbroken chain');
  assert.deepEqual(creep.series.map((s) => s.key), ['latency-1c/hft p50_us', 'latency-1c/hft p99_us'], 'errors is a rate, not a factor');
  for (const s of creep.series) {
    assert.equal(s.ratio[0], 1, 'the reference itself: ×1.00');
    assert.equal(s.lo[0], 1);
    approx(s.ratio.at(-1), 1.007 ** 60, 1e-9, 'the product of the ratios');
    approx(s.ratio.at(-1), 1.52, 0.005, '×1.52');
    assert.ok(s.lo.at(-1) > 1.10, `the band's bottom ${s.lo.at(-1)} is above the gate's +10 %`);
    assert.equal(s.threshold, 1.10);
    assert.equal(s.links, 60);
    // The variances add: 60 links of se (log 1.01 − log 0.99) / (2 z95).
    const se = Math.sqrt(60) * (Math.log(1.01) - Math.log(0.99)) / (2 * 1.959963985);
    approx(s.hi.at(-1), 1.007 ** 60 * Math.exp(zOf(BAND_LEVEL) * se), 1e-9, 'upper bound');
    for (let i = 1; i < s.ratio.length; i += 1) assert.ok(s.ratio[i] > s.ratio[i - 1] && s.lo[i] <= s.ratio[i] && s.ratio[i] <= s.hi[i]);
  }
  // Within ten pushes of the end it has not crept past the gate: a moving window would not see it.
  const last10 = creepLines(runs, { reference: sha(50) });
  assert.ok(last10.series[0].ratio.at(-1) < 1.10);
});

test('a push without a verdict breaks the chain: the lines start again at ×1.00 there', () => {
  const runs = Array.from({ length: 31 }, (_, i) => push(i, { verdict: i !== 10 }));
  const creep = creepLines(runs);
  assert.deepEqual(creep.segments.map((s) => [s.start, s.commit]), [[0, sha(0)], [10, sha(10)]]);
  assert.match(creep.segments[1].why, /no verdict/);
  const s = creep.series[0];
  approx(s.ratio[9], 1.007 ** 9, 1e-9, 'before the break');
  assert.equal(s.ratio[10], 1, 'the push not compared: ×1.00');
  assert.equal(s.hi[10], 1, 'and no spread yet');
  approx(s.ratio[30], 1.007 ** 20, 1e-9, 'after it: only the links since');
  assert.equal(s.links, 20);
  // A partial verdict, or one against another commit than the push before it, breaks it too.
  const partial = runs.map((r, i) => (i === 20 ? { ...r, verdict: { ...r.verdict, partial: true } } : r));
  assert.deepEqual(creepLines(partial).segments.map((x) => x.start), [0, 10, 20]);
  const other = runs.map((r, i) => (i === 25 ? { ...r, verdict: { ...r.verdict, base: 'f'.repeat(40) } } : r));
  const broken = creepLines(other).segments.at(-1);
  assert.equal(broken.start, 25);
  assert.equal(broken.why, `was compared with ffffffffff, not with the push before it (${sha(24).slice(0, 10)})`);
});

test('each link\'s se is read at its stored verdict\'s confidence', () => {
  // The same interval drawn at 98.33 % (three looks) is a smaller se than at 95 %.
  approx(linkSe([0.99, 1.01], 0.95), (Math.log(1.01) - Math.log(0.99)) / (2 * 1.959963985), 1e-10, 'se at 95 %');
  const at = (confidence) => creepLines(Array.from({ length: 11 }, (_, i) => push(i, { ratio: 1.0, width: 0.03, confidence }))).series[0];
  const wide = at(0.95);
  const narrow = at(1 - 0.05 / 3);
  const seOf = (s) => Math.log(s.hi.at(-1)) / zOf(BAND_LEVEL);
  approx(seOf(wide), Math.sqrt(10) * (Math.log(1.03) - Math.log(0.97)) / (2 * zOf(0.95)), 1e-12, 'at 95 %');
  approx(seOf(narrow), Math.sqrt(10) * (Math.log(1.03) - Math.log(0.97)) / (2 * zOf(1 - 0.05 / 3)), 1e-12, 'at 98.33 %');
  assert.ok(seOf(narrow) < seOf(wide));
  // Stored before verdicts carried `confidence`: read at creep.py's default, 99 %.
  const old = Array.from({ length: 11 }, (_, i) => push(i, { ratio: 1.0, width: 0.03 }));
  for (const r of old) if (r.verdict) delete r.verdict.confidence;
  approx(seOf(creepLines(old).series[0]), Math.sqrt(10) * (Math.log(1.03) - Math.log(0.97)) / (2 * zOf(0.99)), 1e-12, 'default 99 %');
  // A mix: the links' variances add, each at its own level.
  const mixed = Array.from({ length: 3 }, (_, i) => push(i, { ratio: 1.0, width: 0.03, confidence: i === 2 ? 0.99 : 0.95 }));
  const d = Math.log(1.03) - Math.log(0.97);
  approx(seOf(creepLines(mixed).series[0]), Math.hypot(d / (2 * zOf(0.95)), d / (2 * zOf(0.99))), 1e-12, 'mixed levels');
});

test('a named reference: the lines start there; one not in the data falls back to the oldest push', () => {
  const runs = Array.from({ length: 41 }, (_, i) => push(i, { verdict: i !== 5 }));
  const creep = creepLines(runs, { reference: sha(20).slice(0, 12) });
  assert.equal(creep.reference.commit, sha(20));
  assert.equal(creep.reference.found, true);
  assert.equal(creep.reference.requested, sha(20).slice(0, 12));
  assert.equal(creep.pushes.length, 21);
  assert.deepEqual(creep.segments.map((s) => s.start), [0], 'the break before the reference does not count');
  approx(creep.series[0].ratio.at(-1), 1.007 ** 20, 1e-9, 'from the reference on');
  const missing = creepLines(runs, { reference: 'abcdef1' });
  assert.equal(missing.reference.found, false);
  assert.equal(missing.reference.commit, sha(0));
});

test('other branches, a commit stored twice, a series gated at some pushes only', () => {
  const runs = Array.from({ length: 6 }, (_, i) => push(i, { metrics: i === 3 ? ['p50_us'] : ['p50_us', 'p99_us'] }));
  runs.push({ ...push(7), branch: 'feature', commit: 'e'.repeat(40), verdict: null });
  const again = { ...push(5, { ratio: 1.5 }), run_id: 'run_5_earlier', date: date(4.5) };
  const creep = creepLines([...runs, again]);
  assert.equal(creep.pushes.length, 6, 'the feature branch left out, commit 5 counted once');
  assert.equal(creep.pushes.at(-1).run_id, 'run_5', 'its newest run');
  const [p50, p99] = creep.series;
  approx(p50.ratio.at(-1), 1.007 ** 5, 1e-9, 'p50: five links');
  approx(p99.ratio.at(-1), 1.007 ** 4, 1e-9, 'p99: not gated at push 3, so four links');
  assert.equal(p99.ratio[3], p99.ratio[2], 'the product stays where there is no link');
  assert.equal(p99.links, 4);
  assert.deepEqual(creepOf(creep, 'latency-1c', 'hft').map((s) => s.metric), ['p50_us', 'p99_us']);
  assert.deepEqual(creepOf(creep, 'load', 'hft'), []);
  assert.equal(slimCreep(creep).series[0].ratio.at(-1), Number((1.007 ** 5).toPrecision(6)));
  assert.deepEqual(creepLines([]).series, []);
  assert.equal(creepLines([]).reference, null);
});

test('the thresholds drawn are the gate\'s own (bench-config/gates.yaml)', () => {
  const yaml = readFileSync(new URL('../../bench-config/gates.yaml', import.meta.url), 'utf8');
  const metrics = yaml.slice(yaml.search(/^metrics:/m));
  const found = {};
  let current = null;
  for (const line of metrics.split('\n').slice(1)) {
    if (/^\S/.test(line)) break;
    const name = line.match(/^ {2}([a-z0-9_]+):\s*$/);
    if (name) current = name[1];
    const threshold = line.match(/^ {4}threshold:\s*([0-9.]+)/);
    if (threshold && current) found[current] = Number(threshold[1]);
  }
  delete found.errors; // an absolute rate, not a factor: no creep line
  delete found.memory_bytes_per_order; // a difference in bytes per order, not a factor: none either
  delete found.p999_exceedance; // each comparison draws its own line: its ratios do not chain
  assert.deepEqual(GATE_THRESHOLDS, found);
  assert.equal(BAND_LEVEL, Number(yaml.match(/^confidence:\s*([0-9.]+)/m)[1]), 'the band at the gate\'s confidence');
});
