// uPlot wrappers: trend (metric against commits, noise bands, change points, gate flags),
// client comparison bars, percentile distribution (log-log). Colours follow the page's theme.
import uPlot from '../vendor/uPlot.esm.js';
import { dateLabels } from './overview.js';
import { trendLines } from './series.js';

export const COLORS = ['#1f77b4', '#d62728', '#9467bd', '#2ca02c', '#ff7f0e', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
export const LABELS = { p50_us: 'p50', p99_us: 'p99', p999_us: 'p99.9', throughput_rps: 'orders/s' };
const BANDED = ['p50_us', 'p99_us']; // the metrics whose run-level spread the store keeps
// A runner's line style when a chart draws several runners (solid, dashed, dotted); style.css .rk0-2 draws the same in the key.
export const RUNNER_DASH = [undefined, [8, 4], [2, 3]];

/** The page's foreground and grid colours (light or dark, from CSS). */
function theme() {
  const css = getComputedStyle(document.documentElement);
  return { fg: css.getPropertyValue('--fg').trim() || '#222', grid: css.getPropertyValue('--grid').trim() || '#0001', flag: css.getPropertyValue('--bad').trim() || '#d00', gate: css.getPropertyValue('--warn').trim() || '#b7791f' };
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

/**
 * One change point label: its pieces (text, colour) left to right, then its commit range (in
 * `color`), after a sample of its runner's line style unless `dash` is null. Right of the marker,
 * else left of it, never past the plot's edges; wider than the plot, it leaves out the range.
 */
function drawLabel(ctx, bbox, x, y, { pieces, range, dash, color }, px) {
  const sample = dash === null ? 0 : 18 * px;
  const gap = ctx.measureText(' ').width;
  const widthOf = (ps) => sample + ps.reduce((w, p) => w + ctx.measureText(p.text).width, 0) + gap * (ps.length - 1);
  const full = range ? [...pieces, { text: range, color }] : pieces;
  const shown = widthOf(full) > bbox.width ? pieces : full;
  const w = widthOf(shown);
  const right = bbox.left + bbox.width;
  let lx = Math.max(bbox.left, Math.min(x + 3 + w > right ? x - 3 - w : x + 3, right - w));
  if (sample) {
    ctx.strokeStyle = color;
    ctx.lineWidth = 1.5 * px;
    ctx.setLineDash(dash ?? []);
    ctx.beginPath();
    ctx.moveTo(lx, y - 4 * px);
    ctx.lineTo(lx + sample - 4 * px, y - 4 * px);
    ctx.stroke();
    ctx.setLineDash([]);
    lx += sample;
  }
  for (const p of shown) {
    ctx.fillStyle = p.color;
    ctx.fillText(p.text, lx, y);
    lx += ctx.measureText(p.text).width + gap;
  }
}

/**
 * Change points (dashed line, size and commit range) and gate regressions (red ring on the run's
 * value). One runner: a label row per field. Several: a label row per runner, led by a sample of
 * its line style, with every field's size at that run and the runner's own commit range.
 */
function drawOverlays(u, trend, fields, { markers, flags, lines, runners }, t) {
  const { ctx, bbox } = u;
  const px = devicePixelRatio;
  const pooled = lines.length > 1;
  const labels = new Map();
  ctx.save();
  ctx.font = `${11 * px}px sans-serif`;
  // uPlot leaves its axes' alignment set (right, centre): the labels are placed by their left edge.
  ctx.textAlign = 'left';
  ctx.textBaseline = 'alphabetic';
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
      const pct = Number(m.changePct);
      const size = `${LABELS[field] ?? field} ${Number.isFinite(pct) ? `${pct > 0 ? '+' : ''}${pct.toFixed(1)}%` : 'change'}`;
      if (!pooled) {
        labels.set(`${m.x}/${k}`, { x, row: k, dash: null, pieces: [{ text: m.range ? `${size} ${m.range}` : size, color: COLORS[k] }] });
        continue;
      }
      const key = `${m.x}/${m.runner}`;
      if (!labels.has(key)) {
        const dash = RUNNER_DASH[Math.max(0, runners.indexOf(m.runner)) % RUNNER_DASH.length];
        labels.set(key, { x, row: Math.max(0, lines.indexOf(m.runner)), dash, color: t.fg, pieces: [], range: m.range });
      }
      labels.get(key).pieces.push({ text: size, color: COLORS[k] });
    }
    const ys = trend.values[field];
    for (const xi of flags[field] ?? []) {
      if (ys[xi] === null || ys[xi] === undefined) continue;
      ctx.strokeStyle = t.flag;
      ctx.lineWidth = 2 * px;
      ctx.beginPath();
      ctx.arc(u.valToPos(xi, 'x', true), u.valToPos(ys[xi], 'y', true), 6 * px, 0, 2 * Math.PI);
      ctx.stroke();
    }
  });
  for (const label of labels.values()) {
    drawLabel(ctx, bbox, label.x, bbox.top + 12 * px * (label.row + 1), label, px);
  }
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
 * A trend chart of one scenario × client. Series: per runner line (trendLines: several runners
 * get one line each, never one zig-zag line across machines) the fields, then for each banded
 * field its lower and upper spread (drawn as a band, no line). x is the run's position among all
 * the trend's runs; onHover(i) / onClick(i) get that index.
 */
export function trendChart(parent, trend, fields, { markers, flags, width, height = 220, onHover, onClick, runners = [] }) {
  const t = theme();
  const xs = trend.runs.map((_, i) => i);
  const latency = fields.every((f) => f.endsWith('_us'));
  const lines = trendLines(trend, runners);
  const only = (values, id) => (id === undefined ? values : values.map((v, i) => ((trend.runs[i].runner ?? null) === id ? v : null)));
  const lineSeries = [];
  const bandSeries = [];
  const bands = [];
  const data = [xs];
  for (const id of lines) {
    const dash = RUNNER_DASH[Math.max(0, runners.indexOf(id)) % RUNNER_DASH.length];
    fields.forEach((f, k) => {
      data.push(only(trend.values[f], id));
      lineSeries.push({ label: `${LABELS[f] ?? f}${id === undefined ? '' : ` ${id}`}`, stroke: COLORS[k], width: 1.5, dash, spanGaps: true, points: { show: false } });
    });
  }
  const bandData = [];
  for (const id of lines) {
    fields.forEach((f, k) => {
      const spread = trend.spreads?.[f];
      if (!BANDED.includes(f) || !spread || !spread.some((s) => s !== null)) return;
      const lo = data.length + bandData.length;
      bandData.push(only(spread.map((s) => s?.[0] ?? null), id), only(spread.map((s) => s?.[1] ?? null), id));
      bandSeries.push({ label: `${LABELS[f]} low`, stroke: 'transparent', width: 0, points: { show: false }, spanGaps: true },
        { label: `${LABELS[f]} high`, stroke: 'transparent', width: 0, points: { show: false }, spanGaps: true });
      bands.push({ series: [lo + 1, lo], fill: `${COLORS[k]}38` });
    });
  }
  data.push(...bandData);
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
      ...lineSeries,
      ...bandSeries,
    ],
    bands,
    legend: { show: false },
    cursor: { points: { show: true } },
    hooks: {
      draw: [(u) => drawOverlays(u, trend, fields, { markers, flags, lines, runners }, t)],
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

// A creep line's colour by metric, as the trend chart colours P50, P99, P99.9 (COLORS 0, 1, 2).
export const CREEP_ORDER = ['p50_us', 'p99_us', 'p999_us', 'throughput_rps', 'cpu_us_per_order', 'p90_us'];
function creepColor(metric) {
  const k = CREEP_ORDER.indexOf(metric);
  return COLORS[k < 0 ? 6 : k];
}

/**
 * The creep chart of one scenario × client (creep.js creepLines, its series for this pair):
 * per metric the product since the reference and its band, the gate's threshold dashed in orange,
 * ×1.00 solid, and a dotted line where the chain broke and starts again. x is the push's position
 * from the reference; a break leaves a gap in the lines. onHover(i) gets that position.
 */
export function creepChart(parent, creep, lines, { width, height = 200, onHover = () => {} }) {
  const t = theme();
  const n = creep.pushes.length;
  const starts = creep.segments.slice(1).map((s) => s.start);
  // A gap (an x with no values) just before each restart: the lines do not join across a break.
  const xs = [];
  const at = []; // the push of each x, null for a gap
  for (let i = 0; i < n; i += 1) {
    if (starts.includes(i)) { xs.push(i - 0.5); at.push(null); }
    xs.push(i);
    at.push(i);
  }
  const pick = (values) => at.map((i) => (i === null ? null : values[i]));
  const data = [xs];
  const series = [{ label: 'push' }];
  const bands = [];
  for (const s of lines) {
    data.push(pick(s.ratio));
    series.push({ label: s.metric, stroke: creepColor(s.metric), width: 1.75, points: { show: false } });
  }
  for (const s of lines) {
    const lo = data.length;
    data.push(pick(s.lo), pick(s.hi));
    series.push({ label: `${s.metric} low`, stroke: 'transparent', width: 0, points: { show: false } },
      { label: `${s.metric} high`, stroke: 'transparent', width: 0, points: { show: false } });
    bands.push({ series: [lo + 1, lo], fill: `${creepColor(s.metric)}30` });
  }
  const thresholds = [...new Set(lines.map((s) => s.threshold).filter((x) => x !== null))];
  const all = lines.flatMap((s) => [...s.lo, ...s.hi]).filter(Number.isFinite);
  const low = Math.min(0.97, ...all);
  const high = Math.max(1.03, ...thresholds.map((x) => x * 1.02), ...all);
  const opts = {
    width,
    height,
    scales: { x: { time: false, range: [0, Math.max(1, n - 1)] }, y: { range: () => [low, high * 1.01] } },
    axes: [
      axis(t, { incrs: RUN_INCRS, space: 70, values: tickLabels(creep.pushes) }),
      axis(t, { label: 'since the reference', size: 60, values: (u, splits) => splits.map((y) => `×${y.toFixed(2)}`) }),
    ],
    series,
    bands,
    legend: { show: false },
    cursor: { points: { show: true } },
    hooks: {
      draw: [(u) => {
        const { ctx, bbox } = u;
        const px = devicePixelRatio;
        ctx.save();
        ctx.font = `${11 * px}px sans-serif`;
        ctx.textAlign = 'left';
        ctx.textBaseline = 'alphabetic';
        const hline = (y, color, dash, width) => {
          const py = u.valToPos(y, 'y', true);
          ctx.strokeStyle = color;
          ctx.lineWidth = width * px;
          ctx.setLineDash(dash);
          ctx.beginPath();
          ctx.moveTo(bbox.left, py);
          ctx.lineTo(bbox.left + bbox.width, py);
          ctx.stroke();
          ctx.setLineDash([]);
          return py;
        };
        hline(1, t.fg, [], 1);
        for (const th of thresholds) {
          const py = hline(th, t.gate, [6 * px, 4 * px], 1.5);
          const label = `gate +${Math.round(100 * (th - 1))}%`;
          ctx.fillStyle = t.gate;
          ctx.fillText(label, bbox.left + 4 * px, py - 4 * px);
        }
        for (const s of starts) {
          const x = u.valToPos(s, 'x', true);
          ctx.strokeStyle = t.fg;
          ctx.lineWidth = 1 * px;
          ctx.setLineDash([2 * px, 3 * px]);
          ctx.beginPath();
          ctx.moveTo(x, bbox.top);
          ctx.lineTo(x, bbox.top + bbox.height);
          ctx.stroke();
          ctx.setLineDash([]);
          const label = `chain restarts ${creep.pushes[s].commit.slice(0, 7)}`;
          const w = ctx.measureText(label).width;
          ctx.fillStyle = t.fg;
          ctx.fillText(label, x + 3 * px + w > bbox.left + bbox.width ? x - 3 * px - w : x + 3 * px, bbox.top + 12 * px);
        }
        ctx.restore();
      }],
      setCursor: [(u) => onHover(u.cursor.idx === null || u.cursor.idx === undefined ? null : at[u.cursor.idx] ?? null)],
    },
  };
  return new uPlot(opts, data, parent);
}
