// Two stored runs side by side, judged by the gate's rules (verdict-rows.js) on what the store
// keeps of each run: its percentiles and the run-level spread of P50 and P99 (history-store.md).
// Stored runs were not measured interleaved, so this is an indication, not a gate verdict; the
// page says so above the table. Pure: no DOM.
import { GATES, classify, overallStatus } from './verdict-rows.js';

const Z95 = 1.959964;
const POWER_Z = 0.8416; // verdict_rules.POWER_Z: 80 % power

/** The standard normal quantile (Acklam's rational approximation, |error| < 1.2e-9). */
export function probit(p) {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q) => (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** sd of log(value) from a stored 95 % spread [lo, hi], or null when there is none. */
export function logSd(spread) {
  if (!Array.isArray(spread) || spread.length !== 2) return null;
  const [lo, hi] = spread;
  if (!(lo > 0 && hi >= lo)) return null;
  return (Math.log(hi) - Math.log(lo)) / (2 * Z95);
}

function resultsBySeries(run) {
  const out = new Map();
  for (const r of run?.results ?? []) out.set(`${r.scenario}/${r.client}`, r);
  return out;
}

/**
 * A verdict-shaped document: {status, results: rows for verdict-rows.js, notJudged: [{series,
 * metric, reason}]}. A series × metric is judged when both runs have a spread for it (two
 * rounds or more); its interval and detectable effect come from the two spreads, its
 * significance from a normal test at alpha / (judged rows), as the gate's Holm first step.
 */
export function compareRuns(base, head, gates = GATES) {
  const b = resultsBySeries(base);
  const h = resultsBySeries(head);
  const candidates = [];
  const notJudged = [];
  for (const [key, hr] of h) {
    const br = b.get(key);
    if (!br) {
      notJudged.push({ series: key, metric: null, reason: 'measured by one run only' });
      continue;
    }
    for (const [metric, gate] of Object.entries(gates.metrics)) {
      const [bv, hv] = [br[metric], hr[metric]];
      if (!(bv > 0 && hv > 0)) continue;
      const sds = [logSd(br.spread?.[metric]), logSd(hr.spread?.[metric])];
      const row = { scenario: hr.scenario, client: hr.client, metric, gated: true, threshold: gate.threshold,
        base_value: bv, head_value: hv, ratio: hv / bv, ci: null, mde: null, verdict: 'inconclusive' };
      if (sds.some((s) => s === null)) {
        notJudged.push({ series: key, metric, reason: 'no run-level spread stored (one round)', row });
        continue;
      }
      candidates.push({ row, sd: Math.hypot(...sds), alpha: gate.alpha });
    }
  }
  for (const key of b.keys()) if (!h.has(key)) notJudged.push({ series: key, metric: null, reason: 'measured by one run only' });
  const family = Math.max(1, candidates.length);
  for (const { row, sd, alpha } of candidates) {
    const critical = probit(1 - alpha / family / 2);
    const log = Math.log(row.ratio);
    row.ci = [row.ratio * Math.exp(-Z95 * sd), row.ratio * Math.exp(Z95 * sd)];
    row.mde = Math.exp((critical + POWER_Z) * sd);
    row.verdict = classify({ ratio: row.ratio, ci: row.ci, significant: Math.abs(log) > critical * sd, threshold: row.threshold });
  }
  const results = candidates.map((c) => c.row);
  return { status: results.length ? overallStatus(results) : 'inconclusive', partial: false, confidence: gates.confidence, results, notJudged };
}
