// uPlot wrappers: trend (metric against commits, change points, gate flags), client
// comparison bars, percentile distribution (log-log).
import uPlot from '../vendor/uPlot.esm.js';

export const COLORS = ['#1f77b4', '#d62728', '#9467bd', '#2ca02c', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const LABELS = { p50_us: 'p50', p99_us: 'p99', p999_us: 'p99.9', throughput_rps: 'orders/s' };

function shortDate(iso) {
  return typeof iso === 'string' ? iso.slice(5, 10) : '';
}

// Whole run indices only: one tick per commit at most, never half a commit.
const RUN_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000];

/** Powers of ten in [min, max]: 1, 10, 100 … on the 1 / (1 - p) axis are 0 %, 90 %, 99 % … */
function decades(u, axisIdx, min, max) {
  const out = [];
  for (let x = 1; x <= max * 1.0001; x *= 10) if (x >= min * 0.9999) out.push(x);
  return out;
}

/** Change points (dashed line + size) and gate regressions (red ring) over the plot. */
function drawOverlays(u, fields, markers, flags) {
  const { ctx, bbox } = u;
  ctx.save();
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
      ctx.font = `${11 * devicePixelRatio}px sans-serif`;
      const pct = Number(m.changePct);
      const label = Number.isFinite(pct) ? `${pct > 0 ? '+' : ''}${pct.toFixed(1)}%` : 'change';
      ctx.fillText(label, x + 3, bbox.top + 12 * devicePixelRatio * (k + 1));
    }
    const ys = u.data[k + 1];
    for (const xi of flags[field] ?? []) {
      if (ys[xi] === null || ys[xi] === undefined) continue;
      ctx.strokeStyle = '#d00';
      ctx.lineWidth = 2 * devicePixelRatio;
      ctx.beginPath();
      ctx.arc(u.valToPos(xi, 'x', true), u.valToPos(ys[xi], 'y', true), 6 * devicePixelRatio, 0, 2 * Math.PI);
      ctx.stroke();
    }
  });
  ctx.restore();
}

/** A trend chart of one scenario × client; onHover(i) gets the run index or null. */
export function trendChart(parent, trend, fields, { markers, flags, width, onHover }) {
  const xs = trend.runs.map((_, i) => i);
  const latency = fields.every((f) => f.endsWith('_us'));
  const opts = {
    width,
    height: 200,
    scales: { x: { time: false, range: [0, Math.max(1, xs.length - 1)] }, y: latency ? { distr: 3 } : {} },
    axes: [
      { incrs: RUN_INCRS, values: (u, splits) => splits.map((i) => shortDate(trend.runs[i]?.date)) },
      { label: latency ? 'µs' : 'orders/s', size: 60 },
    ],
    series: [
      { label: 'run' },
      ...fields.map((f, k) => ({ label: LABELS[f] ?? f, stroke: COLORS[k], width: 1.5, spanGaps: true, points: { show: false } })),
    ],
    legend: { show: true },
    hooks: {
      draw: [(u) => drawOverlays(u, fields, markers, flags)],
      setCursor: [(u) => onHover(u.cursor.idx ?? null)],
    },
  };
  return new uPlot(opts, [xs, ...fields.map((f) => trend.values[f])], parent);
}

/** Client comparison: one bar per client of one metric. */
export function barChart(parent, clients, values, { width, label }) {
  const xs = clients.map((_, i) => i);
  const opts = {
    width,
    height: 220,
    scales: { x: { time: false, range: [-0.5, clients.length - 0.5] }, y: { range: (u, min, max) => [0, max * 1.1] } },
    axes: [
      { values: (u, splits) => splits.map((i) => (Number.isInteger(i) ? clients[i] ?? '' : '')), incrs: [1] },
      { label, size: 70 },
    ],
    series: [
      { label: 'client', value: (u, i) => (i === null ? '' : clients[i] ?? '') },
      { label, fill: COLORS[0] + 'aa', stroke: COLORS[0], paths: uPlot.paths.bars({ size: [0.6, 80] }), points: { show: false } },
    ],
  };
  return new uPlot(opts, [xs, values], parent);
}

/** Percentile distribution: x = 1 / (1 - p) on a log axis, so 90, 99, 99.9 % are equally spaced. */
export function percentileChart(parent, curves, { width }) {
  const tables = curves.map((c) => {
    const pts = c.points.filter(([p]) => p < 100);
    return [pts.map(([p]) => 1 / (1 - p / 100)), pts.map(([, us]) => us)];
  });
  const data = tables.length ? uPlot.join(tables) : [[], []];
  const opts = {
    width,
    height: 260,
    scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
    axes: [
      { splits: decades, values: (u, splits) => splits.map((x) => `${+(100 - 100 / x).toPrecision(6)}%`), label: 'percentile' },
      { label: 'µs', size: 60 },
    ],
    series: [
      { label: 'percentile', value: (u, x) => (x === null ? '' : `${(100 - 100 / x).toFixed(4)}%`) },
      ...curves.map((c, k) => ({ label: c.client, stroke: COLORS[k % COLORS.length], width: 1.5, spanGaps: true, points: { show: false } })),
    ],
  };
  return new uPlot(opts, data, parent);
}
