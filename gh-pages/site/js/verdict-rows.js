// The gate's verdict table and wording, in JS: the same rules as scripts/hftbench/verdict_text.py
// (row cells, table head, headline, order) and verdict_rules.classify, for comparing two stored runs in
// the page. bench-config/testdata/verdict-rows.json holds inputs and the expected cells; a
// pytest checks verdict_text.py against it and a node test this module, so the two cannot drift.
// Pure: no DOM.

/** The gated metrics of bench-config/gates.yaml (the fixture test checks they still agree). */
export const GATES = {
  confidence: 0.95,
  metrics: {
    p99_us: { threshold: 1.10, alpha: 0.01 },
    p999_us: { threshold: 1.15, alpha: 0.01 },
    p50_us: { threshold: 1.10, alpha: 0.01 },
  },
};

export const ICON = { regression: '🔴', inconclusive: '🟡', improvement: '🟢', no_change: '⚪', not_gated: '▫️' };
export const HEADLINE = { regression: '❌ Regression', inconclusive: '🟡 Inconclusive', improvement: '✅ Improvement', no_change: '✅ No change' };
export const LABEL = {
  p50_us: 'P50', p90_us: 'P90', p95_us: 'P95', p99_us: 'P99', p999_us: 'P99.9', p9999_us: 'P99.99',
  throughput_rps: 'throughput', errors: 'error rate',
};
const RANK = { regression: 0, inconclusive: 1, improvement: 2, no_change: 3 };

/** Python's f"{x:+.1f}" / f"{x:,.1f}": fixed decimals, optional sign and thousands commas. */
function fixed(x, digits, { sign = false, commas = false } = {}) {
  const scaled = Math.abs(x) * 10 ** digits;
  // An exact tie rounds to even as Python does (43,400.5 → 43,400); toFixed would round it up.
  const tie = scaled % 1 === 0.5 && Math.floor(scaled) % 2 === 0;
  let s = tie ? (Math.floor(scaled) / 10 ** digits).toFixed(digits) : Math.abs(x).toFixed(digits);
  if (commas) {
    const [int, frac] = s.split('.');
    s = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',') + (frac === undefined ? '' : `.${frac}`);
  }
  const negative = x < 0 || Object.is(x, -0);
  if (negative) return `-${s}`;
  return sign ? `+${s}` : s;
}

const pct = (x) => `${fixed(100 * (x - 1), 1, { sign: true })}%`;
const finite = (x) => typeof x === 'number' && Number.isFinite(x);

export function value(metric, v) {
  if (v === null || v === undefined) return '–';
  if (metric === 'throughput_rps') return `${fixed(v, 0, { commas: true })}/s`;
  return `${fixed(v, 1, { commas: true })} µs`;
}

export function change(r) {
  if (r.ratio === null || r.ratio === undefined) return '–';
  const p = 100 * (r.ratio - 1);
  const arrow = p > 0.05 ? '▲' : p < -0.05 ? '▼' : '=';
  return `${arrow} ${fixed(p, 1, { sign: true })}%`;
}

export function interval(r) {
  const ci = r.ci;
  if (!Array.isArray(ci) || ci.length !== 2 || ci.some((x) => x === null || x === undefined || Number.isNaN(x))) return '–';
  return `${pct(ci[0])} … ${pct(ci[1])}`;
}

/** '≥ +6.0%': the smallest slowdown the comparison would have flagged (80 % power). */
export function detectable(r) {
  if (r.mde === null || r.mde === undefined) return '–';
  if (!Number.isFinite(r.mde)) return 'none (too few runs)';
  return `≥ ${pct(r.mde)}`;
}

const series = (r) => `${r.scenario}/${r.client}`;
// As verdicts.settle_text: past 200 runs a side the estimate only says "out of reach".
const SETTLE_IN_REACH = 200;
const settleText = (runs) => (runs <= SETTLE_IN_REACH
  ? `about ${runs} runs a side would settle it`
  : `more than ${SETTLE_IN_REACH} runs a side would be needed to settle it: out of reach, the series is too noisy on this runner (read its MDE)`);

/** The nine cells of one table row, as verdict_text._row writes them. */
export function rowCells(r) {
  return [
    r.gated ? ICON[r.verdict] : ICON.not_gated, series(r), LABEL[r.metric] ?? r.metric,
    value(r.metric, r.base_value), value(r.metric, r.head_value), change(r), interval(r), detectable(r),
    String(r.verdict).replaceAll('_', ' '),
  ];
}

export function tableHead(confidence) {
  return ['', 'series', 'metric', 'base', 'head', 'change', `${Math.round(100 * confidence)}% interval`, 'could detect', 'verdict'];
}

/** Gated series × metric, most important first (a stable sort, like Python's sorted). */
export function gatedRows(doc) {
  return doc.results.filter((r) => r.gated && r.metric !== 'errors')
    .map((r, i) => [r, i]).sort(([a, i], [b, j]) => (RANK[a.verdict] - RANK[b.verdict]) || (i - j)).map(([r]) => r);
}

/** One line: the status and why (verdict_text.headline, without the error-rate rows). */
export function headline(doc) {
  const { status } = doc;
  const rows = gatedRows(doc);
  let lead = HEADLINE[status] ?? status;
  if (doc.partial) lead += ' (partial: interrupted)';
  const hit = rows.filter((r) => r.verdict === status);
  if ((status === 'regression' || status === 'improvement') && hit.length) {
    const parts = hit.map((r) => `${series(r)} ${LABEL[r.metric]} ${change(r).split(' ').slice(1).join(' ')}`);
    const more = parts.length > 3 ? ` and ${parts.length - 3} more` : '';
    return `${lead}: ${parts.slice(0, 3).join(', ')}${more}`;
  }
  if (status === 'no_change' && rows.length) {
    const worst = Math.max(...rows.map((r) => r.mde || 1.0));
    const within = `±${Math.round(100 * ((rows[0].threshold ?? 1.1) - 1))}%`;
    const sees = Number.isFinite(worst) ? `; each could have detected ${pct(worst)} or more` : '';
    return `${lead}: all ${rows.length} gated series × metrics within ${within}${sees}`;
  }
  if (status === 'inconclusive') {
    const open = rows.filter((r) => r.verdict === 'inconclusive');
    const settle = open.map((r) => r.settle_runs).filter(Boolean);
    const what = settle.length ? `; ${settleText(Math.max(...settle))}` : '';
    return `${lead}: ${open.length} of ${rows.length} gated series × metrics undecided${what}`;
  }
  return lead;
}

/** verdict_rules.classify: a verdict from the ratio, its interval and significance (lower is better). */
export function classify({ ratio, ci, significant, threshold }) {
  if (!finite(ratio) || !Array.isArray(ci) || !ci.every(finite)) return 'inconclusive';
  const [lo, hi] = [...ci].sort((a, b) => a - b);
  if (significant && ratio >= threshold) return 'regression';
  if (significant && ratio <= 1 / threshold) return 'improvement';
  if (hi < threshold && lo > 1 / threshold) return 'no_change';
  return 'inconclusive';
}

/** The overall status of rows, as the gate orders it: any regression, else any inconclusive… */
export function overallStatus(rows) {
  for (const s of ['regression', 'inconclusive', 'improvement']) if (rows.some((r) => r.verdict === s)) return s;
  return 'no_change';
}
