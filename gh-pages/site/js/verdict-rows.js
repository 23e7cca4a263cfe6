// A run's gate verdict as the history store keeps it: `hftbench history add` stores the headline,
// the table's column labels and each gated and reported series × metric's cell texts, rendered
// once by scripts/hftbench/publish/verdict_text.py and verdict_cells.py (docs/history-store.md).
// The page shows those texts as they are: it computes no verdict rule and formats no statistic
// of one. Entries stored before carry only the status word; the page says the rest was not
// stored then. Pure: no DOM.

export const NOT_STORED = 'the gate\'s headline and rows were not stored with runs this old';

const own = (obj, key) => (obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key) ? obj[key] : undefined);
const hasTable = (v) => own(v, 'columns') !== null && typeof own(v, 'columns') === 'object' && Array.isArray(own(v, 'rows'));

/** The verdict in one line: its stored headline, else its status word and why there is no more. */
export function verdictLine(verdict) {
  if (!verdict || typeof verdict !== 'object') return null;
  const headline = own(verdict, 'headline');
  if (typeof headline === 'string') return headline;
  return `${String(own(verdict, 'status') ?? 'unknown')} (${NOT_STORED})`;
}

/**
 * The stored table: {head: [label…], rows: [{scenario, client, metric, gated, verdict, cells:
 * [text…]}]}, the cells in the order of the stored columns; null when the entry stores none.
 */
export function verdictTable(verdict) {
  if (!hasTable(verdict)) return null;
  const keys = Object.keys(verdict.columns);
  const text = (x) => (x === null || x === undefined ? '' : String(x));
  return {
    head: keys.map((k) => text(own(verdict.columns, k))),
    rows: verdict.rows.filter((r) => r && typeof r === 'object').map((r) => ({
      scenario: r.scenario, client: r.client, metric: r.metric, gated: r.gated === true, verdict: text(r.verdict),
      cells: keys.map((k) => text(own(r.cells, k))),
    })),
  };
}

/** The stored row of one series × metric ({…, cells: {column: text}}), or null. */
export function storedRow(verdict, scenario, client, metric) {
  if (!hasTable(verdict)) return null;
  return verdict.rows.find((r) => r && r.scenario === scenario && r.client === client && r.metric === metric) ?? null;
}

/** A stored column's label ("95% interval"), or null. */
export const columnLabel = (verdict, key) => (hasTable(verdict) ? own(verdict.columns, key) ?? null : null);
