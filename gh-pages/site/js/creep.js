// Creep on main, as the dashboard draws it: per gated series × metric, the cumulative change
// since a reference push. Pure: no DOM (node --test checks it; the build also runs it over the
// whole store, derived/creep-<suite>.json).
//
// The same arithmetic as `hftbench creep` (scripts/hftbench/judge/creep.py): every push to main
// was measured against the push before it, base and head interleaved in one run, and its stored
// verdict keeps each gated row's ratio and interval. The cumulative ratio is the product of the
// links' ratios; its log-variance the sum of theirs, each link's standard error read back from
// its stored interval at that verdict's own two-sided `confidence` (already the level the
// interval was drawn at: looks and family included, so never widened again). A push that was not
// compared with the push before it breaks the chain: the lines start again at ×1.00 there, as the
// watch reaches back only to it ("stopped").

/**
 * The gate's thresholds per metric, as "worse" factors: bench-config/gates.yaml `metrics.*.threshold`
 * (test/creep.test.mjs holds this table to that file). The page judges nothing with them: it draws
 * the line a creep has to cross.
 */
export const GATE_THRESHOLDS = { p50_us: 1.10, p90_us: 1.10, p99_us: 1.10, p999_us: 1.15, throughput_rps: 1.10, cpu_us_per_order: 1.10 };
/** The band's level: the gate's own (gates.yaml `confidence`), which `hftbench creep` judges the product at. */
export const BAND_LEVEL = 0.95;
/** A stored verdict without `confidence` (stored before it was) is read at creep.py's default. */
export const DEFAULT_CONFIDENCE = 0.99;

/** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
export function normalQuantile(p) {
  if (!(p > 0 && p < 1)) return p === 0 ? -Infinity : p === 1 ? Infinity : NaN;
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** z of a two-sided level: 0.95 → 1.96. */
export const zOf = (level) => normalQuantile(0.5 + level / 2);

/** The two-sided level a stored verdict's intervals were drawn at (creep.py `level`). */
export function verdictLevel(verdict) {
  const c = Number(verdict?.confidence);
  return c > 0 && c < 1 ? c : DEFAULT_CONFIDENCE;
}

/** A link's standard error of the log ratio from its interval [lo, hi] at `level`: (log hi − log lo) / (2 z). */
export function linkSe(ci, level) {
  return (Math.log(ci[1]) - Math.log(ci[0])) / (2 * zOf(level));
}

const positive = (x) => typeof x === 'number' && Number.isFinite(x) && x > 0;
const sameCommit = (a, b) => Boolean(a && b) && (a.startsWith(b) || b.startsWith(a));
const short = (sha) => String(sha ?? '').slice(0, 10);

/**
 * A push's steps ("scenario/client metric" → {ratio, se}) when it was compared with `previous`
 * (the commit of the push before it), else {why}: the reason the chain breaks there.
 */
export function pushLink(run, previous) {
  const v = run.verdict;
  if (!v || typeof v !== 'object') return { why: 'has no verdict (not compared with the push before it)' };
  if (v.partial) return { why: 'has a partial verdict (not every series compared)' };
  const base = typeof v.base === 'string' ? v.base : v.base?.commit;
  if (!base) return { why: 'was not compared with a base commit' };
  if (!sameCommit(String(base), String(previous ?? ''))) return { why: `was compared with ${short(base)}, not with the push before it (${short(previous)})` };
  const level = verdictLevel(v);
  const steps = new Map();
  for (const r of Array.isArray(v.gated) ? v.gated : []) {
    if (!r || r.metric === 'errors' || !Array.isArray(r.ci) || r.ci.length !== 2) continue; // errors: a rate, not a factor
    if (![r.ratio, ...r.ci].every(positive)) continue;
    steps.set(`${r.scenario}/${r.client} ${r.metric}`, { scenario: r.scenario, client: r.client, metric: r.metric, ratio: r.ratio, se: linkSe(r.ci, level) });
  }
  return { steps };
}

/**
 * The creep lines of main's pushes (`runs`: one suite's runs, any order; other branches are left
 * out) from `reference` (a commit, or a prefix of one; null or not found: the oldest push).
 * Returns {level, reference, pushes, segments, series}:
 * - reference: {commit, date, run_id, requested, found}: the push the lines start from (×1.00);
 * - pushes: [{commit, date, run_id}] from the reference on, in date order (a commit stored twice
 *   in a row counts once, its newest run);
 * - segments: [{start, commit, date, why}]: where a chain starts (index into pushes); the first is
 *   the reference (why null), each later one a push that broke the chain, with the reason;
 * - series: one per gated series × metric, sorted by key: {key, scenario, client, metric,
 *   threshold, ratio, lo, hi (one per push: the product since the segment's start and its
 *   interval at `level`), links (compared pushes of the last segment that gated it)}.
 */
export function creepLines(runs, { reference = null, level = BAND_LEVEL } = {}) {
  const main = runs.filter((r) => r && r.branch === 'main' && r.commit)
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  const deduped = [];
  for (const run of main) {
    if (deduped.length && deduped.at(-1).commit === run.commit) deduped[deduped.length - 1] = run;
    else deduped.push(run);
  }
  const wanted = reference ? String(reference) : null;
  let from = wanted ? deduped.findLastIndex((r) => sameCommit(r.commit, wanted)) : -1;
  const found = from >= 0;
  if (!found) from = 0;
  const chain = deduped.slice(from);
  const z = zOf(level);
  const keys = new Map(); // key -> {scenario, client, metric}
  const links = chain.map((run, i) => (i === 0 ? null : pushLink(run, chain[i - 1].commit)));
  for (const l of links) for (const [key, s] of l?.steps ?? []) if (!keys.has(key)) keys.set(key, s);
  const series = [...keys.keys()].sort().map((key) => {
    const { scenario, client, metric } = keys.get(key);
    return { key, scenario, client, metric, threshold: GATE_THRESHOLDS[metric] ?? null, ratio: [], lo: [], hi: [], links: 0 };
  });
  const segments = [];
  const sums = series.map(() => ({ log: 0, variance: 0, links: 0 }));
  chain.forEach((run, i) => {
    const link = links[i];
    if (i === 0 || link.why) {
      segments.push({ start: i, commit: run.commit, date: run.date ?? null, why: i === 0 ? null : link.why });
      sums.forEach((s) => Object.assign(s, { log: 0, variance: 0, links: 0 }));
    } else {
      series.forEach((s, k) => {
        const step = link.steps.get(s.key);
        if (!step) return; // not gated at this push: no link, the product stays
        sums[k].log += Math.log(step.ratio);
        sums[k].variance += step.se ** 2;
        sums[k].links += 1;
      });
    }
    series.forEach((s, k) => {
      const { log, variance } = sums[k];
      const half = z * Math.sqrt(variance);
      s.ratio.push(Math.exp(log));
      s.lo.push(Math.exp(log - half));
      s.hi.push(Math.exp(log + half));
      s.links = sums[k].links;
    });
  });
  const ref = chain[0];
  return {
    level,
    reference: ref ? { commit: ref.commit, date: ref.date ?? null, run_id: ref.run_id ?? null, requested: wanted, found } : null,
    pushes: chain.map((r) => ({ commit: r.commit, date: r.date ?? null, run_id: r.run_id ?? null })),
    segments,
    series,
  };
}

/** The creep lines of one scenario × client (the series a trend card shows). */
export function creepOf(creep, scenario, client) {
  return (creep?.series ?? []).filter((s) => s.scenario === scenario && s.client === client);
}

/** Rounded for publishing (derived/creep-<suite>.json): 6 significant digits. */
export function slimCreep(creep) {
  const r = (x) => Number(x.toPrecision(6));
  return { ...creep, series: creep.series.map((s) => ({ ...s, ratio: s.ratio.map(r), lo: s.lo.map(r), hi: s.hi.map(r) })) };
}

/** A factor as the page writes a change: ×1.52. */
export const factor = (x) => `×${Number(x).toFixed(2)}`;

/** The metrics as the verdict's rows name them. */
export const METRIC_LABELS = { p50_us: 'P50', p90_us: 'P90', p99_us: 'P99', p999_us: 'P99.9', throughput_rps: 'throughput', cpu_us_per_order: 'CPU per order' };
const metricLabel = (m) => METRIC_LABELS[m] ?? m;
const day = (d) => String(d ?? '?').slice(0, 10);
const pctOf = (x) => `${x >= 1 ? '+' : '−'}${Math.abs(100 * (x - 1)).toFixed(0)} %`;

/**
 * What a creep chart says in words (`lines`: its series, creepOf): its title (the reference's
 * short sha and date), where the reference came from, the legend, each break of the chain, and
 * the lines' last values.
 */
export function creepCaption(creep, lines) {
  const ref = creep.reference;
  const source = ref.found ? 'the creep reference set for this site'
    : ref.requested ? `the creep reference ${ref.requested} is not among main's pushes here, so the oldest push`
      : 'the oldest push of main here (no creep reference set)';
  const thresholds = [...new Set(lines.map((s) => s.threshold).filter((t) => t !== null))].sort();
  const level = `${+(100 * creep.level).toFixed(2)} %`;
  const legend = `Each line: the product of the ratios main's pushes were measured with against the push before it (their stored gate verdicts), ×1.00 at ${ref.commit.slice(0, 7)}. Band: its ${level} interval, the gate's level (the links' variances added, each link's spread read from its interval at its verdict's own level).`
    + (thresholds.length ? ` Orange dashed: the gate's threshold ${thresholds.map(pctOf).join(', ')}.` : '');
  const breaks = creep.segments.slice(1).map((s) => `Chain broken at ${s.commit.slice(0, 10)} (${day(s.date)}): it ${s.why}; the lines start again there at ×1.00.`);
  const i = creep.pushes.length - 1;
  const last = lines.map((s) => `${metricLabel(s.metric)} ${factor(s.ratio[i])} (${factor(s.lo[i])} … ${factor(s.hi[i])}, ${s.links} link${s.links === 1 ? '' : 's'})`);
  return {
    title: `Creep since ${ref.commit.slice(0, 7)} · ${day(ref.date)}`,
    source: `Reference: ${source}.`,
    legend,
    breaks,
    now: last.length ? `Latest push ${creep.pushes[i].commit.slice(0, 7)}: ${last.join(' · ')}` : '',
  };
}

/** One push of a creep chart in words (the hover line). */
export function creepPoint(creep, lines, i) {
  const p = creep.pushes[i];
  if (!p) return '';
  return `${p.commit.slice(0, 10)} · ${p.date ?? ''} · ${lines.map((s) => `${metricLabel(s.metric)} ${factor(s.ratio[i])} (${factor(s.lo[i])} … ${factor(s.hi[i])})`).join(' · ')}`;
}
