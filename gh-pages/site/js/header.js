// The status header: is main healthy? The latest main run, the open regressions (series,
// effect, commit or bisect range, issue link), the change points of the last 30 days, the runner.
import { el } from './dom.js';
import { bisectText, own, recentChangePoints, runnerLabel } from './overview.js';
import { safeUrl } from './series.js';
import { LABELS } from './charts.js';
import { NOT_STORED, verdictLine } from './verdict-rows.js';

const short = (sha) => String(sha ?? '').slice(0, 10);

/** https://github.com/owner/repo from a stored commit or job link, or null. */
export function repoUrl(run) {
  for (const u of [run?.url, run?.job_url]) {
    const m = /^(https?:\/\/[^/]+\/[^/]+\/[^/]+)\/(commit|actions)\//.exec(safeUrl(u) ?? '');
    if (m) return m[1];
  }
  return null;
}

/** A link when the store gives an http(s) url, else the text as code. */
function link(url, text) {
  const safe = safeUrl(url);
  return safe ? el('a', { href: safe, rel: 'noopener noreferrer' }, text) : el('code', {}, text);
}

const commitLink = (repo, sha) => link(repo && sha ? `${repo}/commit/${sha}` : null, short(sha));
const when = (iso) => (typeof iso === 'string' ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : '?');

function latestLine(run, repo) {
  if (!run) return el('p', { class: 'latest' }, 'No run of main is stored yet.');
  const v = run.verdict;
  const verdict = v ? verdictLine(v) : 'no gate verdict stored';
  return el('p', { class: 'latest' }, 'Latest main run: ', link(run.url, short(run.commit)), ` · ${when(run.date)} · `,
    el('span', { class: `verdict v-${v?.status ?? 'none'}` }, verdict),
    run.job_url ? [' · ', link(run.job_url, 'job ↗')] : [], el('span', { class: 'subject' }, ` · ${run.message ?? ''}`));
}

function regressionItem(r, repo, runnerName) {
  const where = bisectText(r.bisect);
  const issues = repo
    // regression-issue opens one per suite with this title and label; search rather than store its number.
    ? `${repo}/issues?q=${encodeURIComponent('is:issue is:open label:performance in:title "Latency regression on main"')}`
    : null;
  // The gate's own texts for the row, as stored; an entry stored before has only the verdict word.
  const c = r.cells;
  const what = c ? [c.series, c.metric, c.change].map((x) => String(x ?? '')).join(' ') : `${r.scenario}/${r.client} ${own(LABELS, r.metric) ?? r.metric}: ${r.verdict}`;
  return el('li', { 'data-regression': r.key },
    el('strong', {}, what), c ? (r.ci ? ` (${r.interval_label ?? 'interval'} ${c.interval})` : '') : ` (${NOT_STORED})`,
    ' since ', commitLink(repo, r.run.commit), ` (${r.run.date?.slice(0, 10) ?? '?'})`,
    runnerName && r.run.runner ? ` on ${runnerName(r.run.runner)}` : '',
    where ? [' · ', el('span', { class: 'bisect' }, where.kind === 'culprit' ? ['culprit ', commitLink(repo, where.sha), ` ${r.bisect.culprit.subject ?? ''}`] : where.text)] : [],
    issues ? [' · ', link(issues, 'open issue ↗')] : []);
}

function changeItem(c, repo, runnerName) {
  return el('li', { 'data-runner': c.runner ?? '' }, `${c.scenario}/${c.client} ${own(LABELS, c.metric) ?? c.metric} `,
    el('strong', {}, `${c.change_pct > 0 ? '+' : ''}${Number(c.change_pct).toFixed(1)}%`), ' at ',
    c.from_commit ? [commitLink(repo, c.from_commit), '..'] : [], commitLink(repo, c.commit), ` (${String(c.date ?? '').slice(0, 10)})`,
    runnerName ? el('span', { class: 'subject' }, ` on ${runnerName(c.runner)}`) : []);
}

function runnerLine(index, run, pool) {
  const fp = own(index.runners, run?.runner);
  if (!fp) return el('p', { class: 'runner-line' }, 'Runner: unknown');
  const tuned = fp.tuned === true ? 'tuned' : fp.tuned === false ? 'not tuned' : 'tuning not checked';
  return el('p', { class: 'runner-line' }, `Runner ${run.runner}: ${fp.cpu_model ?? '?'} · ${fp.cores ?? '?'} cores · kernel ${fp.kernel ?? '?'} · governor ${fp.governor ?? '?'} · `,
    el('span', { class: fp.tuned === true ? 'tuned' : 'untuned' }, tuned), pool > 1 ? ` · one of ${pool} runners` : '');
}

/**
 * Fill `box` from the main runs (date order) of the suite and the change points of the view's
 * runner (`runner`, or 'all': then each names its runner when the store has several).
 */
export function renderHeader(box, { index, suite, mainRuns, latest, open, changepoints, runner = 'all' }) {
  const repo = repoUrl(latest) ?? repoUrl(mainRuns.at(-1));
  const pool = Object.keys(index.runners ?? {}).length;
  const cps = recentChangePoints(changepoints, suite, index.updated_at ?? latest?.date, mainRuns, 30, { runner, storeRunners: pool });
  const runnerName = pool > 1 ? (id) => runnerLabel(index.runners, id) : null;
  const healthy = open.length === 0;
  box.replaceChildren(
    el('p', { class: `health ${healthy ? 'ok' : 'bad'}`, 'data-open': open.length },
      healthy ? `main (${suite}) is healthy: no open regression` : `main (${suite}): ${open.length} open regression${open.length > 1 ? 's' : ''}`),
    latestLine(latest, repo),
    open.length ? el('ul', { class: 'regressions' }, open.map((r) => regressionItem(r, repo, runnerName))) : [],
    el('details', { class: 'changes', open: cps.length > 0 && cps.length <= 5 ? '' : null },
      el('summary', {}, `${cps.length} change point${cps.length === 1 ? '' : 's'} in the last 30 days`, runnerName && runner !== 'all' ? ` on ${runnerName(runner)}` : ''),
      cps.length ? el('ul', {}, cps.slice(0, 40).map((c) => changeItem(c, repo, runnerName))) : el('p', {}, 'None: every series is flat.')),
    runnerLine(index, latest, pool));
}
