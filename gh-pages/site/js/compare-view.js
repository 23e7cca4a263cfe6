// Compare any two stored runs: side by side and unjudged (compare.js), the command that would
// judge them, B's stored gate verdict when it was measured against A's very commit, and both
// sides' percentile distributions.
import { el } from './dom.js';
import { abCommand, judgedAgainst, sideBySide } from './compare.js';
import { percentileChart } from './charts.js';
import { formatValue, safeUrl } from './series.js';
import { verdictBlock } from './verdict-view.js';

const short = (sha) => String(sha ?? '').slice(0, 10);
export const runLabel = (run) => `${short(run.commit)} · ${String(run.date ?? '').slice(0, 16).replace('T', ' ')} · ${run.branch ?? ''} · ${run.message ?? ''}`;

function side(name, run) {
  const url = safeUrl(run.url);
  return el('span', { class: 'side' }, `${name}: `, url ? el('a', { href: url, rel: 'noopener noreferrer' }, short(run.commit)) : el('code', {}, short(run.commit)),
    ` (${String(run.date ?? '').slice(0, 10)}, ${run.rounds ?? 1} round${(run.rounds ?? 1) === 1 ? '' : 's'}) ${run.message ?? ''}`);
}

/** Series × field: A's and B's stored values and B / A, nothing judged. */
function sideTable(rows) {
  return el('table', { class: 'side-by-side' },
    el('thead', {}, el('tr', {}, ['series', 'metric', 'A (base)', 'B (head)', 'B / A'].map((h) => el('th', {}, h)))),
    el('tbody', {}, rows.map((r) => el('tr', { 'data-row': `${r.series}/${r.metric}` },
      el('td', {}, r.series), el('td', {}, r.label), el('td', { class: 'num' }, formatValue(r.base)),
      el('td', { class: 'num' }, formatValue(r.head)), el('td', { class: 'num' }, r.ratio === null ? '–' : r.ratio.toFixed(3))))));
}

/**
 * Draw the comparison of `base` and `head` (stored runs of `suite`) into `box`; `curves(run)`
 * resolves to {"scenario/client": [[p, us]…]} or null. Returns a promise that settles when the
 * distribution is drawn; the table is in the page when this returns.
 */
export function renderCompare(box, base, head, { suite, width, curves, charts }) {
  const { rows, onlyBase, onlyHead } = sideBySide(base, head);
  const dist = el('div', { class: 'compare-dist' }, el('p', {}, 'loading the distributions…'));
  const series = [...new Set(rows.map((r) => r.series))];
  const pick = el('select', { id: 'compare-series', 'aria-label': 'series of the distribution' }, series.map((s) => el('option', { value: s }, s)));
  const machines = base.runner !== head.runner
    ? ` They ran on two runners (${base.runner ?? 'unknown'}, ${head.runner ?? 'unknown'}): B / A mixes the machines with the code.` : '';
  box.replaceChildren(
    el('p', { class: 'sides' }, side('A (base)', base), el('br'), side('B (head)', head)),
    el('h3', { class: 'compare-headline' }, 'Two stored runs side by side: not a verdict'),
    el('p', { class: 'note' }, `Stored runs were measured apart, on different days: they do not judge alone.${machines} `,
      'To judge B against A, measure both commits interleaved in one job:'),
    el('pre', { class: 'ab-command' }, el('code', {}, abCommand(base, head, suite))),
    rows.length ? el('div', { class: 'table-wrap' }, sideTable(rows)) : el('p', {}, 'No series measured by both runs.'),
    onlyBase.length ? el('p', { class: 'one-sided' }, `In A only: ${onlyBase.join(', ')}.`) : [],
    onlyHead.length ? el('p', { class: 'one-sided' }, `In B only: ${onlyHead.join(', ')}.`) : [],
    judgedAgainst(base, head)
      ? el('section', { class: 'pair-verdict' }, el('h3', {}, 'The gate\'s verdict stored with B, against A\'s commit'),
        el('p', { class: 'note' }, 'Measured interleaved in B\'s own job: its numbers are that job\'s, not the stored runs above.'),
        verdictBlock(head.verdict, { level: 'h4' }))
      : [],
    series.length ? el('div', { class: 'compare-dist-head' }, el('h3', {}, 'Percentile distribution, both sides'), pick) : [],
    dist);
  const draw = async () => {
    const [a, b] = await Promise.all([curves(base), curves(head)]);
    const key = pick.value;
    const list = [[a, 'A (base)', [6, 4]], [b, 'B (head)', undefined]]
      .filter(([c]) => c && Object.hasOwn(c, key)).map(([c, label, dash], k) => ({ label: `${label} ${key}`, points: c[key], dash, color: k === 0 && dash ? '#7f7f7f' : undefined }));
    dist.replaceChildren();
    if (list.length === 0) { dist.append(el('p', {}, 'No stored histograms for these runs.')); return; }
    charts.push(percentileChart(dist, list, { width }));
  };
  pick.addEventListener('change', () => { draw(); });
  if (series.length) return draw();
  dist.replaceChildren();
  return Promise.resolve();
}
