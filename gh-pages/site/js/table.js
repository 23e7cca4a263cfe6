// The series table: one row per scenario × client (× runner, when several runners ran it) with a
// P99 sparkline, the latest P50/P99/P99.9, the change against the baseline and the minimum detectable
// effect (the gate's stored texts), and a status dot.
import { el } from './dom.js';
import { sortRows } from './overview.js';
import { formatValue } from './series.js';

const DOT = { invalid: 'invalid: base failed, or nothing judged', regression: 'open regression', inconclusive: 'inconclusive', slower: 'slower, under the gate', improvement: 'improvement', faster: 'faster, under the gate', no_change: 'no change', unjudged: 'no verdict' };

function sparkline(values) {
  const canvas = el('canvas', { class: 'spark', width: 120, height: 24, 'aria-hidden': 'true' });
  const ys = values.filter(Number.isFinite);
  if (ys.length < 2) return canvas;
  // At least ±10 % around the median: run-to-run noise stays small, a real step shows.
  const mid = [...ys].sort((x, y) => x - y)[Math.floor(ys.length / 2)];
  const [lo, hi] = [Math.min(...ys, mid * 0.9), Math.max(...ys, mid * 1.1)];
  const ctx = canvas.getContext('2d');
  ctx.strokeStyle = getComputedStyle(document.documentElement).getPropertyValue('--accent').trim() || '#1f77b4';
  ctx.lineWidth = 1.2;
  ctx.beginPath();
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) return;
    const x = 1 + (118 * i) / (values.length - 1);
    const y = 22 - (hi > lo ? (20 * (v - lo)) / (hi - lo) : 10);
    if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
  });
  ctx.stroke();
  return canvas;
}

function changeCell(r) {
  const p = Number.isFinite(r.ratio) ? 100 * (r.ratio - 1) : 0;
  // Coloured only from ±5 % (half the gate's threshold): noise stays plain text.
  const cls = `change ${p >= 5 ? 'worse' : p <= -5 ? 'better' : ''}`;
  // Against the baseline: the gate's own text, as the store keeps it.
  if (r.change_text !== null && r.change_text !== undefined) return el('td', { class: cls, title: 'P99 against the gate\'s baseline' }, r.change_text);
  if (!Number.isFinite(r.ratio)) return el('td', { class: 'change' }, '–');
  // Against the previous stored run: the plain ratio of two stored values, not a verdict.
  const arrow = p > 0.05 ? '▲' : p < -0.05 ? '▼' : '=';
  return el('td', { class: cls, title: `P99 against the ${r.against} (plain ratio, not a verdict)` },
    `${arrow} ${p >= 0 ? '+' : ''}${p.toFixed(1)}%`, el('sub', {}, ' prev'));
}

/**
 * Draw the table into `box`. `sort` is the view's sort key; onSort(key) and onOpen(row) are
 * called when a column header or a row is clicked (Enter works too). When the rows come from
 * several runners, each names its runner under the series (runnerName(id) gives the words).
 */
export function renderTable(box, rows, { sort, onSort, onOpen, runnerName }) {
  const pooled = new Set(rows.map((r) => r.runner)).size > 1;
  const head = (label, key, cls = '') => el('th', { class: cls, 'aria-sort': sort === key ? 'descending' : sort === `-${key}` ? 'ascending' : null },
    key ? el('button', { type: 'button', 'data-sort': key }, label, sort === key ? ' ▼' : sort === `-${key}` ? ' ▲' : '') : label);
  const table = el('table', { id: 'series-table' },
    el('thead', {}, el('tr', {}, head('', 'status'), head('series', 'name'), head('P99 trend', null), head('P50 µs', null, 'num'),
      head('P99 µs', null, 'num'), head('P99.9 µs', null, 'num'), head('P99 change', 'change', 'num'), head('could detect', null, 'num'))),
    el('tbody', {}, sortRows(rows, sort).map((r) => {
      const tr = el('tr', { tabindex: 0, 'data-series': `${r.scenario}/${r.client}`, 'data-runner': r.runner ?? '', 'data-status': r.status },
        el('td', {}, el('span', { class: `dot s-${r.status}`, title: DOT[r.status] ?? r.status, role: 'img', 'aria-label': DOT[r.status] ?? r.status })),
        el('td', { class: 'name' }, `${r.scenario} × ${r.client}`, pooled ? el('span', { class: 'runner-tag' }, runnerName(r.runner)) : ''),
        el('td', {}, sparkline(r.spark)),
        ...[r.p50_us, r.p99_us, r.p999_us].map((v) => el('td', { class: 'num' }, formatValue(v))),
        changeCell(r),
        el('td', { class: 'num' }, r.detect_text ?? '–'));
      tr.addEventListener('click', () => onOpen(r));
      tr.addEventListener('keydown', (e) => { if (e.key === 'Enter') onOpen(r); });
      return tr;
    })));
  table.querySelectorAll('button[data-sort]').forEach((b) => b.addEventListener('click', () => {
    const key = b.dataset.sort;
    onSort(sort === key && key !== 'name' && key !== 'status' ? `-${key}` : key);
  }));
  box.replaceChildren(table);
}
