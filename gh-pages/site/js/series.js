// From shard runs to what the charts draw. Pure: no DOM.

/** Runs of the view's branch and runner, in date order. */
export function filterRuns(runs, view) {
  return runs
    .filter((r) => view.branch === 'all' || r.branch === view.branch)
    .filter((r) => view.runner === 'all' || r.runner === view.runner)
    .sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
}

/** The scenario × client pairs the view shows, in the index's order. */
export function visibleSeries(seriesList, view) {
  return seriesList.filter(
    (s) => (view.scenario === 'all' || s.scenario === view.scenario)
      && (view.client === 'all' || s.client === view.client),
  );
}

const hasOwn = (obj, key) => obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key);

/** A stored spread [lo, hi] (history-store.md: results[].spread), or null. */
function spreadOf(result, field) {
  const s = hasOwn(result.spread, field) ? result.spread[field] : null;
  return Array.isArray(s) && s.length === 2 && s.every(Number.isFinite) ? s : null;
}

/**
 * One trend per scenario × client: the runs that measured it, and per metric field the
 * values (x = position among those runs, so every commit gets one step) and the run-level
 * spreads (null where a run has none).
 */
export function trends(runs, pairs, fields) {
  const byKey = new Map(pairs.map((p) => [`${p.scenario}/${p.client}`, {
    ...p, runs: [], values: Object.fromEntries(fields.map((f) => [f, []])), spreads: Object.fromEntries(fields.map((f) => [f, []])),
  }]));
  for (const run of runs) {
    for (const r of run.results ?? []) {
      const t = byKey.get(`${r.scenario}/${r.client}`);
      if (!t) continue;
      t.runs.push(run);
      for (const f of fields) {
        t.values[f].push(Number.isFinite(r[f]) ? r[f] : null);
        t.spreads[f].push(spreadOf(r, f));
      }
    }
  }
  return [...byKey.values()];
}

/** The runner ids of `runs`, sorted, so a runner keeps its line style in every chart; runs without one last. */
export function runnersOf(runs) {
  const ids = [...new Set(runs.map((r) => r.runner ?? null))];
  return ids.filter((id) => id !== null).sort().concat(ids.includes(null) ? [null] : []);
}

/** The runners of `runners` (the view's, runnersOf) that ran this trend, one line each; [undefined] (one line) when fewer than two. */
export function trendLines(trend, runners = []) {
  const present = runners.filter((id) => trend.runs.some((r) => (r.runner ?? null) === id));
  return present.length > 1 ? present : [undefined];
}

/** One trend per runner (same shape, plus `runner`), in the order of `runnersOf`: rows and lines of one machine each. */
export function splitByRunner(trend) {
  const parts = new Map(runnersOf(trend.runs).map((id) => [id, {
    ...trend, runner: id, runs: [],
    values: Object.fromEntries(Object.keys(trend.values).map((f) => [f, []])),
    spreads: Object.fromEntries(Object.keys(trend.spreads ?? {}).map((f) => [f, []])),
  }]));
  trend.runs.forEach((run, i) => {
    const part = parts.get(run.runner ?? null);
    part.runs.push(run);
    for (const f of Object.keys(part.values)) part.values[f].push(trend.values[f][i]);
    for (const f of Object.keys(part.spreads)) part.spreads[f].push(trend.spreads[f][i]);
  });
  return [...parts.values()];
}

/**
 * Whether a change point belongs to the runner(s) shown (`runner`: the view's, or 'all'). Each
 * entry names the runner whose runs it was found in; an older entry without `runner` was found
 * in every runner's runs mixed, so it is trusted only in a store of one runner.
 */
export function changePointShown(cp, runner, storeRunners) {
  if (!hasOwn(cp, 'runner')) return storeRunners <= 1;
  return runner === 'all' || cp.runner === runner;
}

/**
 * Change points of one series that fall on a run of the trend and on a runner shown: x, runner,
 * size, commit range (from the same runner's previous run: the others' runs between do not count).
 */
export function changeMarkers(changepoints, suite, trend, field, { runner = 'all', storeRunners = 1 } = {}) {
  const key = `${suite}/${trend.scenario}/${trend.client}/${field}`;
  const list = hasOwn(changepoints?.series, key) && Array.isArray(changepoints.series[key]) ? changepoints.series[key] : [];
  const xOf = new Map(trend.runs.map((r, i) => [r.run_id, i]));
  const short = (sha) => String(sha ?? '').slice(0, 7);
  return list
    .filter((c) => xOf.has(c.run_id) && changePointShown(c, runner, storeRunners))
    .map((c) => {
      const x = xOf.get(c.run_id);
      const on = trend.runs[x].runner ?? null;
      const from = trend.runs.slice(0, x).findLast((r) => (r.runner ?? null) === on)?.commit;
      return { x, runner: on, changePct: c.change_pct, before: c.before, after: c.after, range: from ? `${short(from)}..${short(trend.runs[x].commit)}` : short(trend.runs[x].commit) };
    });
}

/** x of the runs whose gate verdict flagged this series and field as a regression. */
export function regressionFlags(trend, field) {
  const xs = [];
  trend.runs.forEach((run, i) => {
    const flags = run.verdict?.flags ?? [];
    if (flags.some((f) => f.verdict === 'regression' && f.scenario === trend.scenario
      && f.client === trend.client && f.metric === field)) xs.push(i);
  });
  return xs;
}

/** The latest run: the one the index names, else the newest loaded. */
export function latestRun(runs, latestId) {
  return runs.find((r) => r.run_id === latestId) ?? runs.at(-1) ?? null;
}

/** Only http(s) links are followed; anything else (javascript:, data:) is dropped. */
export function safeUrl(url) {
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : null;
}

export function formatValue(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (Number.isInteger(v) || Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return v.toPrecision(3);
}
