// The dashboard: index first, then the shards of the chosen range (newest first, so the first
// paint needs one shard): the status header, the series table, the trend charts, the compare
// view and the latest run. Lookups keyed by the URL or the store use Maps or Object.hasOwn.
import { el, clear } from './dom.js';
import { KEYS, METRICS, choices, monthOfRun, parseView, serializeView, shardsFor, storeProblem, SCHEMA_VERSION } from './state.js';
import { filterRuns, visibleSeries, trends, changeMarkers, regressionFlags, latestRun, safeUrl, formatValue, runnersOf, splitByRunner, trendLines } from './series.js';
import { latestMainRun, openRegressions, own, runnerLabel, seriesRows } from './overview.js';
import { trendChart, barChart, percentileChart, creepChart, COLORS, CREEP_ORDER, LABELS } from './charts.js';
import { creepCaption, creepLines, creepOf, creepPoint, METRIC_LABELS } from './creep.js';
import { renderHeader } from './header.js';
import { renderTable } from './table.js';
import { renderCompare, runLabel } from './compare-view.js';
import { verdictLine } from './verdict-rows.js';
import { verdictBlock } from './verdict-view.js';

const $ = (id) => document.getElementById(id);
const cache = new Map();
const page = { index: null, changepoints: null, view: null, charts: [], compareCharts: [], token: 0, runs: [], creep: Promise.resolve(null) };
const TABLE_FIELDS = ['p50_us', 'p99_us', 'p999_us'];

function fetchJson(path, { optional = false } = {}) {
  if (!cache.has(path)) {
    cache.set(path, fetch(path).then((r) => {
      if (r.ok) return r.json();
      if (optional && r.status === 404) return null;
      throw new Error(`${path}: HTTP ${r.status}`);
    }));
  }
  return cache.get(path);
}

function status(text, error = false) {
  const box = $('status');
  box.textContent = text;
  box.className = error ? 'error' : '';
}

async function loadShard(suite, month) {
  const name = `${encodeURIComponent(suite)}/${encodeURIComponent(month)}.json`;
  // The build writes each shard without its histograms (~1/7 of the bytes); a site
  // built before this shard was added still reads the store's own shard.
  const shard = await fetchJson(`derived/trend/${name}`, { optional: true }) ?? await fetchJson(`data/shards/${name}`);
  if (!Number.isInteger(shard.schema_version) || shard.schema_version > SCHEMA_VERSION) {
    throw new Error(`shard ${suite}/${month} has schema_version ${shard.schema_version}; this dashboard reads ${SCHEMA_VERSION}`);
  }
  return shard.runs ?? [];
}

function setView(change, { push = true } = {}) {
  page.view = parseView(serializeView({ ...page.view, ...change }), page.index);
  if (push) history.pushState(null, '', serializeView(page.view));
}

const runnerName = (id) => runnerLabel(page.index.runners, id);

function optionLabel(key, value) {
  if (key === 'runner' && value !== 'all') return runnerName(value);
  if (key === 'metric') return METRICS[value].label;
  return value;
}

function renderFilters() {
  const allowed = choices(page.index, page.view.suite);
  const box = clear($('filters'));
  for (const key of KEYS) {
    const select = el('select', { id: `f-${key}`, name: key },
      allowed[key].map((v) => el('option', { value: v, selected: v === page.view[key] }, optionLabel(key, v))));
    select.addEventListener('change', () => {
      // A new suite has other scenarios and clients: parseView re-validates the whole view.
      setView({ [key]: select.value });
      renderFilters();
      render();
    });
    box.append(el('label', {}, key, select));
  }
}

function runLine(run) {
  if (!run) return [];
  const sha = String(run.commit ?? '').slice(0, 10);
  const v = run.verdict;
  const link = (url, text) => (safeUrl(url) ? el('a', { href: safeUrl(url), rel: 'noopener noreferrer' }, text) : el('code', {}, text));
  return [
    link(run.url, sha),
    ` · ${run.date ?? ''} · ${run.branch ?? ''} · ${run.author ?? ''}${run.dirty ? ' · dirty' : ''}`,
    v ? ` · verdict: ${verdictLine(v)}` : ' · no verdict',
    run.job_url ? [' · ', link(run.job_url, 'job ↗')] : [],
    el('div', { class: 'message' }, run.message ?? ''),
  ];
}

function chartWidth(container, min = 560) {
  const w = container.clientWidth || 1000;
  const cols = Math.max(1, Math.floor(w / (min + 14)));
  return Math.floor((w - 14 * (cols - 1)) / cols) - 14;
}

// Charts below the fold are drawn when scrolled to: 50 series must not delay the first screen.
const lazy = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting || !e.target.drawChart) continue;
    lazy.unobserve(e.target);
    e.target.drawChart();
  }
}, { rootMargin: '400px' });

function pickButtons(run) {
  return ['a', 'b'].map((which) => {
    const b = el('button', { type: 'button', class: 'pick', 'data-pick': which }, which === 'a' ? 'compare: set as A (base)' : 'set as B (head)');
    b.addEventListener('click', (e) => { e.stopPropagation(); pickRun(which, run.run_id); });
    return b;
  });
}

function drawTrends(runs) {
  const { view, index, changepoints } = page;
  lazy.disconnect();
  const box = clear($('trends'));
  const fields = METRICS[view.metric].fields;
  const pairs = visibleSeries(own(index.suites, view.suite)?.series ?? [], view);
  const runners = runnersOf(runs); // the same runner keeps the same line style in every chart
  const storeRunners = Object.keys(index.runners ?? {}).length;
  let drawn = 0;
  for (const trend of trends(runs, pairs, fields)) {
    if (trend.runs.length === 0) continue;
    const lines = trendLines(trend, runners);
    const pooled = lines.length > 1;
    const hover = el('div', { class: 'hover' }, 'hover a point for its commit; click it to keep it and compare');
    const plot = el('div', { class: 'plot' });
    const key = el('p', { class: 'key' }, fields.map((f, k) => el('span', { class: `k k${k}` }, `— ${LABELS[f] ?? f}`)),
      fields.some((f) => f === 'p50_us' || f === 'p99_us') ? ' · shaded: 95% run-level spread' : '');
    const runnerKey = pooled ? el('p', { class: 'key runners' }, lines.map((id) =>
      el('span', { class: `rk rk${runners.indexOf(id) % 3}`, 'data-runner': id ?? '' }, runnerName(id)))) : '';
    const card = el('section', { class: 'card', 'data-series': `${trend.scenario}/${trend.client}`, 'data-lines': lines.length },
      el('h3', {}, `${trend.scenario} × ${trend.client}`), key, runnerKey, plot, hover);
    const creepBox = el('div', { class: 'creep' });
    card.append(creepBox);
    box.append(card);
    let pinned = null;
    const show = (i) => hover.replaceChildren(...runLine(trend.runs[i]), pooled ? el('div', { class: 'hover-runner' }, `runner: ${runnerName(trend.runs[i].runner)}`) : '',
      el('div', {}, fields.map((f) => `${LABELS[f] ?? f} ${formatValue(trend.values[f][i])}`).join(' · ')), el('div', {}, pickButtons(trend.runs[i])));
    card.drawChart = () => {
      card.drawChart = null;
      const markers = Object.fromEntries(fields.map((f) => [f, changeMarkers(changepoints, view.suite, trend, f, { runner: view.runner, storeRunners })]));
      const flags = Object.fromEntries(fields.map((f) => [f, regressionFlags(trend, f)]));
      const onHover = (i) => { if (pinned === null && i !== null && trend.runs[i]) show(i); };
      const onClick = (i) => { pinned = pinned === i ? null : i; card.classList.toggle('pinned', pinned !== null); show(i); };
      card.dataset.drawn = 'true';
      // The grid sizes the cards (two columns at 1400 px, one on a phone); the chart fills its card.
      const width = Math.max(240, (plot.clientWidth || chartWidth(box)) - 2);
      page.charts.push(trendChart(plot, trend, fields, { markers, flags, width, onHover, onClick, runners }));
      drawCreep(creepBox, trend, width, page.creep);
    };
    if (card.getBoundingClientRect().top < window.innerHeight) card.drawChart();
    else lazy.observe(card);
    drawn += 1;
  }
  if (drawn === 0) box.append(el('p', {}, 'No runs match these filters.'));
  return drawn;
}

/**
 * Under a series' trend: its creep since the reference (creep.js), one line per gated metric, when
 * main's stored verdicts gated it. `creep` resolves to creepLines' result (the build's, over the
 * whole store, else from the loaded runs).
 */
async function drawCreep(box, trend, width, creep) {
  const data = await creep;
  const lines = data?.reference ? creepOf(data, trend.scenario, trend.client) : [];
  if (!lines.length || !box.isConnected) return;
  const text = creepCaption(data, lines);
  const hover = el('div', { class: 'creep-hover' }, '');
  const plot = el('div', { class: 'creep-plot' });
  box.dataset.reference = data.reference.commit;
  box.dataset.breaks = data.segments.length - 1;
  box.replaceChildren(
    el('h4', {}, text.title),
    el('p', { class: 'key' }, lines.map((s) => el('span', { class: `k k${CREEP_ORDER.indexOf(s.metric)}`, 'data-metric': s.metric }, `— ${METRIC_LABELS[s.metric] ?? s.metric}`)),
      ' · shaded: ', `${+(100 * data.level).toFixed(2)}% interval`, ' · ', el('span', { class: 'gate' }, '- - gate')),
    plot,
    el('p', { class: 'creep-now' }, text.now),
    hover,
    ...text.breaks.map((b) => el('p', { class: 'creep-break' }, b)),
    el('p', { class: 'legend' }, `${text.source} ${text.legend}`),
  );
  const onHover = (i) => hover.replaceChildren(i === null ? '' : creepPoint(data, lines, i));
  page.charts.push(creepChart(plot, data, lines, { width, onHover }));
  box.dataset.drawn = 'true';
}

/** Clicking a table row opens its chart: drawn now, scrolled to, outlined. */
function openChart(row) {
  const card = [...document.querySelectorAll('#trends .card')].find((c) => c.dataset.series === `${row.scenario}/${row.client}`);
  if (!card) return;
  document.querySelectorAll('#trends .card.focus').forEach((c) => c.classList.remove('focus'));
  if (card.drawChart) { lazy.unobserve(card); card.drawChart(); }
  card.classList.add('focus');
  card.scrollIntoView({ block: 'center' });
}

function drawTable(runs) {
  const { view, index } = page;
  const pairs = visibleSeries(own(index.suites, view.suite)?.series ?? [], view);
  // A row per runner: a machine's change is against its own previous run, never another machine's.
  const rows = seriesRows(trends(runs, pairs, TABLE_FIELDS).flatMap(splitByRunner), page.open ?? []);
  renderTable($('series'), rows, {
    runnerName,
    sort: view.sort,
    onSort: (sort) => { setView({ sort }); drawTable(runs); },
    onOpen: openChart,
  });
}

async function findRun(id) {
  const loaded = page.runs.find((r) => r.run_id === id);
  if (loaded) return loaded;
  const month = monthOfRun(id);
  if (!month || !(own(page.index.suites, page.view.suite)?.shards ?? []).includes(month)) return null;
  return (await loadShard(page.view.suite, month)).find((r) => r.run_id === id) ?? null;
}

function runCurves(run) {
  return fetchJson(`derived/curves/${encodeURIComponent(page.view.suite)}/${encodeURIComponent(run.run_id)}.json`, { optional: true })
    .then((d) => d?.percentiles ?? null).catch(() => null);
}

/** The two run lists (newest first); rebuilt only when the loaded runs changed, else re-selected. */
function fillPickers() {
  for (const which of ['a', 'b']) {
    const select = $(`pick-${which}`);
    if (select.runs !== page.runs) {
      const runs = [...page.runs].reverse();
      select.replaceChildren(el('option', { value: '' }, which === 'a' ? 'A (base): choose a run' : 'B (head): choose a run'),
        ...runs.map((r) => el('option', { value: r.run_id }, runLabel(r))));
      select.runs = page.runs;
    }
    const id = page.view[which];
    if (id && ![...select.options].some((o) => o.value === id)) select.append(el('option', { value: id }, id));
    select.value = id;
  }
}

async function drawCompare() {
  const box = $('compare-body');
  const section = $('compare');
  for (const c of page.compareCharts) c.destroy();
  page.compareCharts = [];
  const { a, b } = page.view;
  section.dataset.state = 'loading';
  if (!a || !b) {
    box.replaceChildren(el('p', {}, 'Pick two runs: click a point in a trend chart and "set as A" / "set as B", or choose two commits above.'));
    section.dataset.state = 'empty';
    return;
  }
  section.open = true;
  const [base, head] = await Promise.all([findRun(a), findRun(b)]);
  if (!base || !head) {
    box.replaceChildren(el('p', { class: 'error' }, `Run ${!base ? a : b} is not in the store of suite ${page.view.suite}.`));
    section.dataset.state = 'error';
    return;
  }
  const dist = renderCompare(box, base, head, { suite: page.view.suite, width: Math.min(900, box.clientWidth || 900), curves: runCurves, charts: page.compareCharts });
  section.dataset.state = 'ready';
  performance.mark('hft:compare-ready');
  await dist;
  performance.mark('hft:compare-dist');
  section.dataset.dist = 'ready';
}

function pickRun(which, id) {
  performance.mark('hft:compare-click');
  setView({ [which]: id });
  fillPickers();
  drawCompare();
  if (page.view.a && page.view.b) $('compare').scrollIntoView({ block: 'start' });
}

async function drawLatest(runs) {
  const { view, index } = page;
  const box = clear($('latest'));
  const run = latestRun(runs, own(index.suites, view.suite)?.latest_run);
  if (!run) return;
  const derived = await fetchJson(`derived/latest-${encodeURIComponent(view.suite)}.json`, { optional: true });
  box.append(el('h2', {}, `Latest run: ${run.run_id}`), el('div', { class: 'runline' }, runLine(run)),
    el('section', { class: 'latest-verdict' }, el('h3', {}, 'Gate verdict, as stored with this run'), verdictBlock(run.verdict, { level: 'h4' })));
  const scenarios = [...new Set((run.results ?? []).map((r) => r.scenario))]
    .filter((s) => view.scenario === 'all' || s === view.scenario);
  const width = chartWidth(box, 440);
  const grid = el('div', { class: 'grid' });
  box.append(grid);
  for (const scenario of scenarios) {
    const results = run.results.filter((r) => r.scenario === scenario);
    const clients = results.map((r) => r.client);
    const bars = el('div', {});
    const dist = el('div', {});
    const table = el('table', {},
      el('tr', {}, ['client', 'p50 µs', 'p99 µs', 'p99.9 µs', 'orders/s', 'errors'].map((h) => el('th', {}, h))),
      results.map((r) => el('tr', {}, [r.client, r.p50_us, r.p99_us, r.p999_us, r.throughput_rps, r.errors]
        .map((v, k) => el('td', {}, k === 0 ? v : formatValue(v))))));
    grid.append(el('section', { class: 'card', 'data-latest': scenario },
      el('h3', {}, `${scenario}: client comparison`), bars, table,
      el('h3', {}, `${scenario}: percentile distribution`), dist));
    page.charts.push(barChart(bars, clients, results.map((r) => r.throughput_rps), { width, label: 'orders/s' }));
    const curves = derived?.run_id === run.run_id && derived.percentiles
      ? clients.map((client, k) => ({ label: client, color: COLORS[k % COLORS.length], points: own(derived.percentiles, `${scenario}/${client}`) ?? [] })).filter((c) => c.points.length)
      : [];
    if (curves.length) page.charts.push(percentileChart(dist, curves, { width }));
    else dist.append(el('p', {}, 'No stored histograms for this run.'));
  }
  const fp = own(index.runners, run.runner);
  box.append(el('h2', {}, 'Runner'),
    el('table', { class: 'runner' }, Object.entries(fp ?? { id: run.runner }).map(([k, v]) =>
      el('tr', {}, el('th', {}, k), el('td', {}, typeof v === 'object' ? JSON.stringify(v) : String(v))))));
}

async function render() {
  const token = ++page.token;
  document.body.dataset.state = 'loading';
  const { view, index } = page;
  const months = shardsFor(index, view.suite, view.range);
  const runs = [];
  // Open regressions over the whole store (derived at publish time), else over the loaded months.
  const openFile = fetchJson(`derived/open-${encodeURIComponent(view.suite)}.json`, { optional: true }).catch(() => null);
  const creepFile = fetchJson(`derived/creep-${encodeURIComponent(view.suite)}.json`, { optional: true }).catch(() => null);
  let derivedOpen = null;
  const paint = async (final, first) => {
    for (const c of page.charts) c.destroy();
    page.charts = [];
    page.runs = filterRuns(runs, { branch: 'all', runner: 'all' });
    const mainRuns = filterRuns(runs, { branch: 'main', runner: 'all' });
    page.open = Array.isArray(derivedOpen?.open) ? derivedOpen.open : openRegressions(mainRuns);
    // Creep over the whole store from the build's reference (derived), else over the loaded months.
    page.creep = creepFile.then((d) => d?.creep ?? creepLines(mainRuns));
    renderHeader($('overview'), { index, suite: view.suite, mainRuns, latest: latestMainRun(mainRuns) ?? page.runs.at(-1), open: page.open, changepoints: page.changepoints, runner: view.runner });
    const shown = filterRuns(runs, view);
    drawTable(shown);
    const drawn = drawTrends(shown);
    status(`${view.suite}: ${shown.length} runs shown from ${months.length} month(s)${final ? '' : ', loading older months…'}; ${drawn} trend charts`);
    // First paint = header, table and the trend charts on screen; the latest run is below them.
    if (first) performance.mark('hft:first-paint');
    if ($('compare').open || view.a || view.b) fillPickers();
    await drawLatest(runs);
  };
  try {
    if (months.length === 0) {
      status(`suite "${view.suite}" has no runs yet`);
    } else {
      const [newest, open, changepoints] = await Promise.all([loadShard(view.suite, months[0]), openFile, page.changepointsLoad]);
      runs.push(...newest);
      derivedOpen = open;
      page.changepoints = changepoints;
      if (token !== page.token) return;
      await paint(months.length === 1, true);
      const older = await Promise.all(months.slice(1).map((m) => loadShard(view.suite, m)));
      if (token !== page.token) return;
      if (older.length) {
        for (const o of older) runs.push(...o);
        await paint(true, false);
      }
      if (token !== page.token) return;
      await drawCompare();
    }
    document.body.dataset.state = 'ready';
  } catch (err) {
    if (token !== page.token) return;
    status(`cannot show the history: ${err.message}`, true);
    document.body.dataset.state = 'error';
  }
}

function wireCompareControls() {
  for (const which of ['a', 'b']) {
    $(`pick-${which}`).addEventListener('change', (e) => pickRun(which, e.target.value));
  }
  $('compare-swap').addEventListener('click', () => {
    setView({ a: page.view.b, b: page.view.a });
    fillPickers();
    drawCompare();
  });
  $('compare').addEventListener('toggle', () => { if ($('compare').open) fillPickers(); });
}

async function main() {
  try {
    page.index = await fetchJson('data/index.json');
    const problem = storeProblem(page.index);
    if (problem) throw new Error(problem);
  } catch (err) {
    status(`cannot read the history store: ${err.message}`, true);
    document.body.dataset.state = 'error';
    return;
  }
  // Fetched beside the first shard, not before it: one round trip less before the first paint.
  page.changepointsLoad = fetchJson('data/changepoints.json', { optional: true }).catch(() => null);
  page.view = parseView(location.search, page.index);
  history.replaceState(null, '', serializeView(page.view));
  $('updated').textContent = `store updated ${page.index.updated_at ?? '?'}`;
  window.addEventListener('popstate', () => {
    page.view = parseView(location.search, page.index);
    renderFilters();
    render();
  });
  wireCompareControls();
  renderFilters();
  await render();
}

main();
