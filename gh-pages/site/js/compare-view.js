// Compare any two runs: the gate's table and wording (verdict-rows.js) over compare.js's rows,
// the series the rules could not judge, and both sides' percentile distributions.
import { el } from './dom.js';
import { compareRuns } from './compare.js';
import { percentileChart } from './charts.js';
import { safeUrl } from './series.js';
import { GATES, LABEL, headline, rowCells, tableHead } from './verdict-rows.js';

const short = (sha) => String(sha ?? '').slice(0, 10);
export const runLabel = (run) => `${short(run.commit)} · ${String(run.date ?? '').slice(0, 16).replace('T', ' ')} · ${run.branch ?? ''} · ${run.message ?? ''}`;

function side(name, run) {
  const url = safeUrl(run.url);
  return el('span', { class: 'side' }, `${name}: `, url ? el('a', { href: url, rel: 'noopener noreferrer' }, short(run.commit)) : el('code', {}, short(run.commit)),
    ` (${String(run.date ?? '').slice(0, 10)}, ${run.rounds ?? 1} round${(run.rounds ?? 1) === 1 ? '' : 's'}) ${run.message ?? ''}`);
}

/** "P99.9 of 50 series (no run-level spread stored)": grouped by metric and reason, as verdict_text groups. */
function notJudgedText(skipped) {
  const groups = new Map();
  for (const n of skipped) {
    const key = `${LABEL[n.metric] ?? n.metric}\u0000${n.reason}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(n.series);
  }
  return [...groups].map(([key, series]) => {
    const [metric, reason] = key.split('\u0000');
    return `${metric} of ${series.length > 6 ? `${series.length} series` : series.join(', ')} (${reason})`;
  }).join('; ');
}

/** The verdict table: header row and one row per judged series × metric, cells as text. */
function verdictTable(doc) {
  return el('table', { class: 'verdict-table' },
    el('thead', {}, el('tr', {}, tableHead(doc.confidence ?? GATES.confidence).map((h) => el('th', {}, h)))),
    el('tbody', {}, doc.results.map((r) => el('tr', { 'data-verdict': r.verdict, 'data-row': `${r.scenario}/${r.client}/${r.metric}` },
      rowCells(r).map((c) => el('td', {}, c))))));
}

/**
 * Draw the comparison of `base` and `head` (stored runs) into `box`; `curves(run)` resolves to
 * {"scenario/client": [[p, us]…]} or null. Returns a promise that settles when the
 * distribution is drawn; the table is in the page when this returns.
 */
export function renderCompare(box, base, head, { width, curves, charts }) {
  const doc = compareRuns(base, head);
  const judged = doc.results.length;
  const skipped = doc.notJudged.filter((n) => n.metric !== null);
  const oneSided = doc.notJudged.filter((n) => n.metric === null);
  const dist = el('div', { class: 'compare-dist' }, el('p', {}, 'loading the distributions…'));
  const series = [...new Set([...doc.results, ...skipped.map((n) => n.row)].map((r) => `${r.scenario}/${r.client}`))];
  const pick = el('select', { id: 'compare-series', 'aria-label': 'series of the distribution' }, series.map((s) => el('option', { value: s }, s)));
  box.replaceChildren(
    el('p', { class: 'sides' }, side('A (base)', base), el('br'), side('B (head)', head)),
    el('h3', { class: 'compare-headline' }, judged ? headline(doc) : 'No series could be judged: these runs store no run-level spread'),
    el('p', { class: 'note' }, 'Stored runs, not measured interleaved: each ratio is judged by the gate\'s rules (thresholds of gates.yaml, ',
      'interval and detectable effect from each run\'s stored spread of its rounds). An indication, not a gate verdict.'),
    judged ? el('div', { class: 'table-wrap' }, verdictTable(doc)) : [],
    skipped.length ? el('p', { class: 'not-judged' }, `Not judged: ${notJudgedText(skipped)}.`) : [],
    oneSided.length ? el('p', { class: 'not-judged' }, `In one run only: ${oneSided.map((n) => n.series).join(', ')}.`) : [],
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
  return series.length ? draw() : Promise.resolve();
}
