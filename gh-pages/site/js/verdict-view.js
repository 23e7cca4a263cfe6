// A stored gate verdict drawn as the gate wrote it (verdict-rows.js reads it): the headline and
// the table of stored cell texts; for an entry stored before the rows were, the status word and
// a note. Nothing here formats a number.
import { el } from './dom.js';
import { verdictLine, verdictTable } from './verdict-rows.js';

/** The table element of a stored verdict, or null when the entry stores no rows. */
export function verdictTableEl(verdict) {
  const table = verdictTable(verdict);
  if (!table || table.rows.length === 0) return null;
  return el('table', { class: 'verdict-table' },
    el('thead', {}, el('tr', {}, table.head.map((h) => el('th', {}, h)))),
    el('tbody', {}, table.rows.map((r) => el('tr', { 'data-verdict': r.verdict, 'data-gated': String(r.gated), 'data-row': `${r.scenario}/${r.client}/${r.metric}` },
      r.cells.map((c) => el('td', {}, c))))));
}

/** The headline (a `level` heading) and the table, or a line saying that no verdict is stored. */
export function verdictBlock(verdict, { level = 'h3' } = {}) {
  if (!verdict || typeof verdict !== 'object') return el('p', { class: 'stored-verdict none' }, 'No gate verdict stored with this run.');
  const table = verdictTableEl(verdict);
  return el('div', { class: 'stored-verdict', 'data-status': String(verdict.status ?? '') },
    el(level, { class: 'verdict-headline' }, verdictLine(verdict)),
    table ? el('div', { class: 'table-wrap' }, table) : []);
}
