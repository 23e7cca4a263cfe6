// What the status header and the series table say: the latest main run, the regressions still
// open, recent change points, one row per series. Pure: no DOM; lookups keyed by store data
// use Maps or Object.hasOwn, so a suite called "constructor" is just a name.

import { changePointShown } from './series.js';
import { columnLabel, storedRow } from './verdict-rows.js';

const DAY_MS = 86400e3;
export const own = (obj, key) => (obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key) ? obj[key] : undefined);

/** A runner as people know it: its CPU model (untuned said), then its fingerprint id. */
export function runnerLabel(runners, id) {
  const r = own(runners, id) ?? {};
  return `${r.cpu_model ?? 'runner'}${r.tuned === false ? ' (untuned)' : ''} · ${id ?? 'unknown'}`;
}

/** The newest run of main (runs in date order), else the newest run. */
export function latestMainRun(runs) {
  for (let i = runs.length - 1; i >= 0; i -= 1) if (runs[i].branch === 'main') return runs[i];
  return runs.at(-1) ?? null;
}

/** The gated rows of a stored verdict; a store without `gated` has only `flags`. */
function verdictRows(verdict) {
  if (!verdict || verdict.partial) return [];
  return Array.isArray(verdict.gated) ? verdict.gated : (verdict.flags ?? []);
}

/** The texts the gate stored for a row (verdict-rows.js): its cells and the interval's label, or nulls. */
function storedTexts(verdict, row) {
  const cells = storedRow(verdict, row.scenario, row.client, row.metric)?.cells;
  return { cells: cells && typeof cells === 'object' ? cells : null, interval_label: columnLabel(verdict, 'interval') };
}

/**
 * Regressions of main not yet recovered: a gated series × metric judged a regression, and no
 * later verdict of main judging it an improvement. The rule of `hftbench regression-issue`: each
 * push is compared with the previous commit, so a later "no change" means still slow. Newest
 * first; `bisect` is the optional range or culprit the verdict carries, `cells` the row's texts
 * as the gate stored them (null for entries stored before).
 */
export function openRegressions(runs) {
  const open = new Map();
  for (const run of runs) {
    if (run.branch !== 'main') continue;
    for (const row of verdictRows(run.verdict)) {
      const key = `${row.scenario}/${row.client}/${row.metric}`;
      if (row.verdict === 'regression') {
        if (!open.has(key)) open.set(key, { ...row, key, run, bisect: run.verdict.bisect ?? null, ...storedTexts(run.verdict, row) });
      } else if (row.verdict === 'improvement') {
        open.delete(key);
      }
    }
  }
  return [...open.values()].sort((a, b) => (a.run.date < b.run.date ? 1 : a.run.date > b.run.date ? -1 : 0));
}

/** An open regression without its whole run: what the header shows, small enough to publish. */
export function slimOpen(o) {
  const { run, ...rest } = o;
  const keep = ['run_id', 'date', 'commit', 'url', 'job_url', 'message', 'runner'];
  return { ...rest, run: Object.fromEntries(keep.filter((k) => k in run).map((k) => [k, run[k]])) };
}

/** The bisect result in words: the culprit commit, else the good..bad range. */
export function bisectText(bisect) {
  if (!bisect || typeof bisect !== 'object') return null;
  const short = (s) => String(s ?? '').slice(0, 10);
  if (bisect.status === 'culprit' && bisect.culprit) return { kind: 'culprit', sha: String(bisect.culprit.sha ?? ''), text: `culprit ${short(bisect.culprit.sha)} ${bisect.culprit.subject ?? ''}`.trim() };
  return { kind: 'between', sha: null, text: `between ${short(bisect.good)} (good) and ${short(bisect.bad)} (bad)${bisect.reason ? `: ${bisect.reason}` : ''}` };
}

/**
 * Change points of `suite` on the runner(s) shown (`runner`, or 'all'; changePointShown) whose run
 * is within `days` before `until` (ISO), newest first, each with its runner and the commit of that
 * runner's run before it (from `runs`, the branch's runs in order) so it reads as a range.
 */
export function recentChangePoints(changepoints, suite, until, runs, days = 30, { runner = 'all', storeRunners = 1 } = {}) {
  const series = own(changepoints, 'series') ?? {};
  const from = Date.parse(until) - days * DAY_MS;
  const runnerOf = new Map(runs.map((r) => [r.run_id, r.runner ?? null]));
  const prev = new Map();
  const lastOf = new Map(); // runner → its latest commit so far
  for (const r of runs) {
    prev.set(r.run_id, lastOf.get(r.runner ?? null) ?? null);
    lastOf.set(r.runner ?? null, r.commit ?? null);
  }
  const out = [];
  for (const [key, list] of Object.entries(series)) {
    const [s, scenario, client, metric] = key.split('/');
    if (s !== suite || !Array.isArray(list)) continue;
    for (const cp of list) {
      if (!(Date.parse(cp.date) >= from) || !changePointShown(cp, runner, storeRunners)) continue;
      out.push({ scenario, client, metric, ...cp, runner: cp.runner ?? runnerOf.get(cp.run_id) ?? null, from_commit: prev.get(cp.run_id) ?? null });
    }
  }
  return out.sort((a, b) => (a.date < b.date ? 1 : a.date > b.date ? -1 : 0));
}

/**
 * One table row per trend (trends() over p50/p99/p99.9, split by runner): the last `spark` P99
 * values, the latest percentiles, the change of P99 against the baseline (the latest stored
 * verdict's P99 row: its ratio for sorting, its change and could-detect texts as the gate stored
 * them; without one, or for an entry stored before the rows were, the plain ratio to the previous
 * run), and a status. An open regression is main's code, whichever runner's gate flagged it:
 * every runner's row of the series shows it.
 */
export function seriesRows(trendList, open, spark = 60) {
  const openKeys = new Set(open.map((o) => `${o.scenario}/${o.client}`));
  return trendList.filter((t) => t.runs.length).map((t) => {
    const n = t.runs.length;
    const last = t.runs[n - 1];
    const p99 = t.values.p99_us;
    const gated = verdictRows(last.verdict).find((g) => g.scenario === t.scenario && g.client === t.client && g.metric === 'p99_us');
    const cells = gated ? storedTexts(last.verdict, gated).cells : null;
    const previous = n > 1 && p99[n - 2] > 0 && p99[n - 1] > 0 ? p99[n - 1] / p99[n - 2] : null;
    return {
      scenario: t.scenario, client: t.client, runner: t.runner ?? null, spark: p99.slice(-spark),
      p50_us: t.values.p50_us[n - 1], p99_us: p99[n - 1], p999_us: t.values.p999_us[n - 1],
      ratio: cells ? gated.ratio : previous, against: cells ? 'baseline' : (previous === null ? null : 'previous run'),
      change_text: cells ? String(cells.change ?? '') : null, detect_text: cells ? String(cells.could_detect ?? '') : null,
      status: openKeys.has(`${t.scenario}/${t.client}`) ? 'regression' : (gated?.verdict ?? 'unjudged'),
      run: last,
    };
  });
}

const STATUS_RANK = { invalid: 0, regression: 0, inconclusive: 1, slower: 2, improvement: 3, faster: 4, no_change: 5, unjudged: 6, not_gated: 7 };

/** Sorted copy: by change (largest slowdown first, or last), by status, or by name. */
export function sortRows(rows, key) {
  const byName = (a, b) => `${a.scenario}/${a.client}`.localeCompare(`${b.scenario}/${b.client}`) || String(a.runner ?? '').localeCompare(String(b.runner ?? ''));
  const change = (r) => (Number.isFinite(r.ratio) ? r.ratio : -Infinity);
  const cmp = {
    change: (a, b) => change(b) - change(a) || byName(a, b),
    '-change': (a, b) => change(a) - change(b) || byName(a, b),
    status: (a, b) => (STATUS_RANK[a.status] ?? 9) - (STATUS_RANK[b.status] ?? 9) || byName(a, b),
    name: byName,
  }[key] ?? byName;
  return [...rows].sort(cmp);
}

/** Tick labels for run dates: times within a day or two, day-month within a year, else month-year. */
export function dateLabels(isoDates) {
  const ts = isoDates.map((d) => Date.parse(d)).filter(Number.isFinite);
  const span = ts.length ? Math.max(...ts) - Math.min(...ts) : 0;
  const fmt = span < 2 * DAY_MS ? (d) => d.slice(11, 16) : span < 300 * DAY_MS ? (d) => d.slice(5, 10) : (d) => d.slice(0, 7);
  const full = span < 2 * DAY_MS ? (d) => `${d.slice(5, 10)} ${d.slice(11, 16)}` : fmt;
  return { label: (d) => (typeof d === 'string' ? fmt(d) : ''), first: (d) => (typeof d === 'string' ? full(d) : ''), unit: span < 2 * DAY_MS ? 'time (UTC)' : span < 300 * DAY_MS ? 'date' : 'month' };
}
