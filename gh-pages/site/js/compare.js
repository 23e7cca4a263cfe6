// Two stored runs side by side, unjudged: each series' stored percentiles and throughput, and the
// plain ratio B / A. Stored runs were measured on different days (maybe on different runners) and
// do not judge alone (docs/architecture.md): a verdict needs both commits measured interleaved in one
// job, the command `abCommand` spells out. So this module has no test, interval or verdict. Pure.

/** What the side-by-side table shows of a stored result: [field, label]. */
export const SHOWN = [['p50_us', 'P50 µs'], ['p99_us', 'P99 µs'], ['p999_us', 'P99.9 µs'], ['throughput_rps', 'orders/s']];
// As history.baseline_commit and the store's suite names: store text that is anything else is not
// put into a command someone will paste into a shell.
const SHA = /^[0-9a-f]{7,40}$/;
const SUITE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const finite = (x) => typeof x === 'number' && Number.isFinite(x);

function bySeries(run) {
  const out = new Map();
  for (const r of run?.results ?? []) out.set(`${r.scenario}/${r.client}`, r);
  return out;
}

/**
 * {rows: [{series, metric, label, base, head, ratio}], onlyBase: [series], onlyHead: [series]}:
 * one row per series of both runs × shown field that either stores; ratio = head / base, or null.
 */
export function sideBySide(base, head) {
  const b = bySeries(base);
  const h = bySeries(head);
  const rows = [];
  for (const [series, hr] of h) {
    const br = b.get(series);
    if (!br) continue;
    for (const [metric, label] of SHOWN) {
      const [bv, hv] = [br[metric], hr[metric]];
      if (!finite(bv) && !finite(hv)) continue;
      rows.push({ series, metric, label, base: finite(bv) ? bv : null, head: finite(hv) ? hv : null,
        ratio: finite(bv) && finite(hv) && bv > 0 ? hv / bv : null });
    }
  }
  return { rows, onlyBase: [...b.keys()].filter((k) => !h.has(k)), onlyHead: [...h.keys()].filter((k) => !b.has(k)) };
}

/** The command that judges the pair: both commits built and measured interleaved in one job. */
export function abCommand(base, head, suite) {
  const sha = (run, name) => (SHA.test(run?.commit ?? '') ? run.commit : `<commit of ${name}>`);
  return `hftbench ab --base ${sha(base, 'A')} --head ${sha(head, 'B')}${SUITE.test(suite ?? '') ? ` --suite ${suite}` : ''}`;
}

/** Whether B's stored gate verdict judged B against A's very commit (measured interleaved in B's job). */
export function judgedAgainst(base, head) {
  const against = head?.verdict?.base;
  return typeof against === 'string' && SHA.test(against) && against === base?.commit;
}
