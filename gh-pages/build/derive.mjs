// Precomputed data for the latest run of each suite: the percentile curve of every
// stored histogram, so the browser never decodes HdrHistogram itself.
import { decode, percentileLevels, valuesAtPercentiles } from '../lib/hdr.mjs';

/** [[percentile, value_us], ...] of one base64 histogram (values in ns, as stored). */
export function percentileCurve(histogram) {
  const h = decode(histogram);
  if (h.total === 0) return [];
  const levels = percentileLevels(h.total);
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
