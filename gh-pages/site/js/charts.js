// uPlot wrappers: trend (metric against commits, noise bands, change points, gate flags),
// client comparison bars, percentile distribution (log-log). Colours follow the page's theme.
import uPlot from '../vendor/uPlot.esm.js';
import { dateLabels } from './overview.js';

export const COLORS = ['#1f77b4', '#d62728', '#9467bd', '#2ca02c', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
export const LABELS = { p50_us: 'p50', p99_us: 'p99', p999_us: 'p99.9', throughput_rps: 'orders/s' };
const BANDED = ['p50_us', 'p99_us']; // the metrics whose run-level spread the store keeps

/** The page's foreground and grid colours (light or dark, from CSS). */
function theme() {
  const css = getComputedStyle(document.documentElement);
  return { fg: css.getPropertyValue('--fg').trim() || '#222', grid: css.getPropertyValue('--grid').trim() || '#0001', flag: css.getPropertyValue('--bad').trim() || '#d00' };
}

function axis(t, extra) {
  return { stroke: t.fg, grid: { stroke: t.grid, width: 1 }, ticks: { stroke: t.grid, width: 1 }, ...extra };
}

// Whole run indices only: one tick per commit at most, never half a commit.
const RUN_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

/** Powers of ten in [min, max]: 1, 10, 100 … on the 1 / (1 - p) axis are 0 %, 90 %, 99 % … */
function decades(u, axisIdx, min, max) {
  const out = [];
  for (let x = 1; x <= max * 1.0001; x *= 10) if (x >= min * 0.9999) out.push(x);
  return out;
}

/** Change points (dashed line, size and commit range) and gate regressions (red ring). */
function drawOverlays(u, fields, markers, flags, t) {
  const { ctx, bbox } = u;
  const px = devicePixelRatio;
  ctx.save();
  ctx.font = `${11 * px}px sans-serif`;
  fields.forEach((field, k) => {
    for (const m of markers[field] ?? []) {
      const x = u.valToPos(m.x, 'x', true);
      ctx.strokeStyle = COLORS[k];
      ctx.setLineDash([4, 4]);
      ctx.beginPath();
      ctx.moveTo(x, bbox.top);
      ctx.lineTo(x, bbox.top + bbox.height);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.fillStyle = COLORS[k];
      const pct = Number(m.changePct);
      const size = Number.isFinite(pct) ? `${pct > 0 ? '+' : ''}${pct.toFixed(1)}%` : 'change';
      const label = m.range ? `${LABELS[field] ?? field} ${size} ${m.range}` : `${LABELS[field] ?? field} ${size}`;
      const w = ctx.measureText(label).width;
      const lx = x + 3 + w > bbox.left + bbox.width ? x - 3 - w : x + 3;
      ctx.fillText(label, lx, bbox.top + 12 * px * (k + 1));
    }
    const ys = u.data[k + 1];
    for (const xi of flags[field] ?? []) {
      if (ys[xi] === null || ys[xi] === undefined) continue;
      ctx.strokeStyle = t.flag;
      ctx.lineWidth = 2 * px;
      ctx.beginPath();
      ctx.arc(u.valToPos(xi, 'x', true), u.valToPos(ys[xi], 'y', true), 6 * px, 0, 2 * Math.PI);
      ctx.stroke();
    }
  });
  ctx.restore();
}

/** Labels for tick indices: a date or time per run that fits the range, repeated ones left blank. */
function tickLabels(runs) {
  const fmt = dateLabels(runs.map((r) => r.date));
  return (u, splits) => {
    let previous = null;
    return splits.map((i, k) => {
      const d = runs[i]?.date;
      const label = k === 0 ? fmt.first(d) : fmt.label(d);
      if (label === previous) return '';
      previous = label;
      return label;
    });
  };
}

/**
 * A trend chart of one scenario × client. Series: the fields, then for each banded field its
 * lower and upper spread (drawn as a band, no line). onHover(i) / onClick(i) get the run index.
 */
export function trendChart(parent, trend, fields, { markers, flags, width, height = 220, onHover, onClick }) {
  const t = theme();
  const xs = trend.runs.map((_, i) => i);
  const latency = fields.every((f) => f.endsWith('_us'));
  const bandSeries = [];
  const bands = [];
  const data = [xs, ...fields.map((f) => trend.values[f])];
  fields.forEach((f, k) => {
    const spread = trend.spreads?.[f];
    if (!BANDED.includes(f) || !spread || !spread.some((s) => s !== null)) return;
    const lo = data.length;
    data.push(spread.map((s) => s?.[0] ?? null), spread.map((s) => s?.[1] ?? null));
    bandSeries.push({ label: `${LABELS[f]} low`, stroke: 'transparent', width: 0, points: { show: false }, spanGaps: true },
      { label: `${LABELS[f]} high`, stroke: 'transparent', width: 0, points: { show: false }, spanGaps: true });
    bands.push({ series: [lo + 1, lo], fill: `${COLORS[k]}38` });
  });
  const opts = {
    width,
    height,
    scales: { x: { time: false, range: [0, Math.max(1, xs.length - 1)] }, y: latency ? { distr: 3 } : {} },
    axes: [
      axis(t, { incrs: RUN_INCRS, space: 70, values: tickLabels(trend.runs) }),
      axis(t, { label: latency ? 'µs' : 'orders/s', size: 60 }),
    ],
    series: [
      { label: 'run' },
      ...fields.map((f, k) => ({ label: LABELS[f] ?? f, stroke: COLORS[k], width: 1.5, spanGaps: true, points: { show: false } })),
      ...bandSeries,
    ],
    bands,
    legend: { show: false },
    cursor: { points: { show: true } },
    hooks: {
      draw: [(u) => drawOverlays(u, fields, markers, flags, t)],
      setCursor: [(u) => onHover(u.cursor.idx ?? null)],
      ready: [(u) => u.over.addEventListener('click', () => { if (u.cursor.idx !== null && u.cursor.idx !== undefined) onClick(u.cursor.idx); })],
    },
  };
  return new uPlot(opts, data, parent);
}

/** Client comparison: one bar per client of one metric. */
export function barChart(parent, clients, values, { width, label }) {
  const t = theme();
  const xs = clients.map((_, i) => i);
  const opts = {
    width,
    height: 220,
    legend: { live: false },
    scales: { x: { time: false, range: [-0.5, clients.length - 0.5] }, y: { range: (u, min, max) => [0, max * 1.1] } },
    axes: [
      axis(t, { values: (u, splits) => splits.map((i) => (Number.isInteger(i) ? clients[i] ?? '' : '')), incrs: [1] }),
      axis(t, { label, size: 70 }),
    ],
    series: [
      { label: 'client', value: (u, i) => (i === null ? '' : clients[i] ?? '') },
      { label, fill: COLORS[0] + 'aa', stroke: COLORS[0], paths: uPlot.paths.bars({ size: [0.6, 80] }), points: { show: false } },
    ],
  };
  return new uPlot(opts, [xs, values], parent);
}

/**
 * Percentile distribution: x = 1 / (1 - p) on a log axis, so 90, 99, 99.9 % are equally spaced.
 * curves: [{label, points: [[p, us]…], dash?}] (a comparison draws its base side dashed).
 */
export function percentileChart(parent, curves, { width }) {
  const t = theme();
  const tables = curves.map((c) => {
    const pts = c.points.filter(([p]) => p < 100);
    return [pts.map(([p]) => 1 / (1 - p / 100)), pts.map(([, us]) => us)];
  });
  const data = tables.length ? uPlot.join(tables) : [[], []];
  const opts = {
    width,
    height: 260,
    legend: { live: false }, // the names only: no "--" placeholders before a hover
    scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
    axes: [
      axis(t, { splits: decades, values: (u, splits) => splits.map((x) => `${+(100 - 100 / x).toPrecision(6)}%`), label: 'percentile' }),
      axis(t, { label: 'µs', size: 60 }),
    ],
    series: [
      { label: 'percentile', value: (u, x) => (x === null ? '' : `${(100 - 100 / x).toFixed(4)}%`) },
      ...curves.map((c, k) => ({ label: c.label, stroke: c.color ?? COLORS[k % COLORS.length], width: 1.5, dash: c.dash, spanGaps: true, points: { show: false } })),
    ],
  };
  return new uPlot(opts, data, parent);
}
