// Precomputed data for the latest run of each suite: the percentile curve of every
// stored histogram, so the browser never decodes HdrHistogram itself.
import { decode, percentileLevels, valuesAtPercentiles } from '../lib/hdr.mjs';
import { openRegressions, slimOpen } from '../site/js/overview.js';
import { filterRuns } from '../site/js/series.js';
import { creepLines, slimCreep } from '../site/js/creep.js';

/** [[percentile, value_us], ...] of one base64 histogram (values in ns, as stored). */
export function percentileCurve(histogram) {
  const h = decode(histogram);
  if (h.totalCount === 0) return [];
  const levels = percentileLevels(h.totalCount);
  const values = valuesAtPercentiles(h, levels);
  return levels.map((p, i) => [Number(p.toFixed(6)), values[i] / 1000]);
}

/**
 * The latest run of a suite and its curves. `shardRuns(month)` gives the runs of a shard;
 * months are searched newest first for the run the index names.
 */
export function deriveLatest(suite, entry, shardRuns, warn = () => {}) {
  const months = [...(entry.shards ?? [])].sort().reverse();
  for (const month of months) {
    const runs = shardRuns(month);
    const run = runs.find((r) => r.run_id === entry.latest_run) ?? (entry.latest_run ? null : runs.at(-1));
    if (!run) continue;
    const percentiles = {};
    for (const r of run.results ?? []) {
      if (!r.histogram) continue;
      try {
        percentiles[`${r.scenario}/${r.client}`] = percentileCurve(r.histogram);
      } catch (err) {
        warn(`suite ${suite}, run ${run.run_id}, ${r.scenario}/${r.client}: ${err.message}; curve left out`);
      }
    }
    return { schema_version: 1, suite, run_id: run.run_id, percentiles };
  }
  return null;
}

/** A shard for the trend charts: the same runs without their histograms. */
export function slimShard(shard) {
  return {
    ...shard,
    runs: (shard.runs ?? []).map((run) => ({
      ...run,
      results: (run.results ?? []).map(({ histogram, ...rest }) => rest),
    })),
  };
}

/** Percentile levels of the compare view's distribution: coarse, a few per decade of the tail. */
export const COMPARE_LEVELS = [0, 25, 50, 75, 90, 95, 98, 99, 99.5, 99.8, 99.9, 99.95, 99.99, 99.995, 99.999, 100];
const SAFE_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Per run, the coarse percentile curve of every stored histogram, for the compare view's
 * distribution (one small file per run, fetched only when that run is compared). Runs whose id
 * is not a plain file name are skipped. `cache` maps a histogram string to its curve: stores
 * repeat histograms rarely, the synthetic one often.
 */
export function runCurves(run, cache = new Map(), warn = () => {}) {
  if (!SAFE_FILE.test(run.run_id ?? '')) return null;
  const percentiles = {};
  for (const r of run.results ?? []) {
    if (!r.histogram) continue;
    let curve = cache.get(r.histogram);
    if (curve === undefined) {
      try {
        const h = decode(r.histogram);
        const levels = COMPARE_LEVELS.filter((p) => p === 100 || (1 - p / 100) * h.totalCount >= 1);
        const values = h.totalCount ? valuesAtPercentiles(h, levels) : [];
        curve = levels.map((p, i) => [p, Number((values[i] / 1000).toPrecision(4))]).filter((pt) => Number.isFinite(pt[1]));
      } catch (err) {
        warn(`run ${run.run_id}, ${r.scenario}/${r.client}: ${err.message}; curve left out`);
        curve = null;
      }
      cache.set(r.histogram, curve);
    }
    if (curve?.length) percentiles[`${r.scenario}/${r.client}`] = curve;
  }
  return { schema_version: 1, run_id: run.run_id, percentiles };
}

/**
 * The open regressions of main over the whole store (the page loads only a few months): the
 * header's list, by the page's own rule (overview.js openRegressions).
 */
export function deriveOpen(suite, runs) {
  const main = filterRuns(runs, { branch: 'main', runner: 'all' });
  return { schema_version: 1, suite, open: openRegressions(main).map(slimOpen) };
}

/**
 * The creep lines of main over the whole store (the page loads only a few months): from
 * `reference` (the build's --creep-reference, else the index's `creep_reference`), else from the
 * oldest push of main; by the page's own computation (creep.js creepLines).
 */
export function deriveCreep(suite, runs, reference = null) {
  return { schema_version: 1, suite, creep: slimCreep(creepLines(runs, { reference })) };
}
