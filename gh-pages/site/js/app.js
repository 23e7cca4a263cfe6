// The dashboard: index first, then the shards of the chosen range (newest first, so the
// first paint needs one shard), then trend charts and the latest run.
import { el, clear } from './dom.js';
import { KEYS, METRICS, choices, parseView, serializeView, shardsFor, storeProblem, SCHEMA_VERSION } from './state.js';
import { filterRuns, visibleSeries, trends, changeMarkers, regressionFlags, latestRun, safeUrl, formatValue } from './series.js';
import { trendChart, barChart, percentileChart } from './charts.js';

const $ = (id) => document.getElementById(id);
const cache = new Map();
const page = { index: null, changepoints: null, view: null, charts: [], token: 0 };

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

function optionLabel(key, value) {
  if (key === 'runner' && value !== 'all') {
    const r = page.index.runners?.[value] ?? {};
    return `${r.cpu_model ?? 'runner'}${r.tuned === false ? ' (untuned)' : ''} · ${value}`;
  }
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
      page.view[key] = select.value;
      // A new suite has other scenarios and clients: re-validate the whole view.
      page.view = parseView(serializeView(page.view), page.index);
      history.pushState(null, '', serializeView(page.view));
      renderFilters();
      render();
    });
    box.append(el('label', {}, key, select));
  }
}

function runLine(run) {
  if (!run) return [];
  const url = safeUrl(run.url);
  const sha = String(run.commit ?? '').slice(0, 10);
  return [
    url ? el('a', { href: url, rel: 'noopener noreferrer' }, sha) : el('code', {}, sha),
    ` · ${run.date ?? ''} · ${run.branch ?? ''} · ${run.author ?? ''}${run.dirty ? ' · dirty' : ''}`,
    el('div', { class: 'message' }, run.message ?? ''),
  ];
}

function chartWidth(container, min = 380) {
  const w = container.clientWidth || 1000;
  const cols = Math.max(1, Math.floor(w / (min + 24)));
  return Math.floor(w / cols) - 24;
}

// Charts below the fold are drawn when scrolled to: 50 series must not delay the first screen.
const lazy = new IntersectionObserver((entries) => {
  for (const e of entries) {
    if (!e.isIntersecting || !e.target.drawChart) continue;
    lazy.unobserve(e.target);
    e.target.drawChart();
  }
}, { rootMargin: '400px' });

function drawTrends(runs) {
  const { view, index, changepoints } = page;
  lazy.disconnect();
  const box = clear($('trends'));
  const fields = METRICS[view.metric].fields;
  const shown = filterRuns(runs, view);
  const pairs = visibleSeries(index.suites[view.suite]?.series ?? [], view);
  const width = chartWidth(box);
  let drawn = 0;
  for (const trend of trends(shown, pairs, fields)) {
    if (trend.runs.length === 0) continue;
    const hover = el('div', { class: 'hover' }, 'hover a point: commit, date, message');
    const plot = el('div', { class: 'plot' });
    const card = el('section', { class: 'card', 'data-series': `${trend.scenario}/${trend.client}` },
      el('h3', {}, `${trend.scenario} × ${trend.client}`), plot, hover);
    box.append(card);
    card.drawChart = () => {
      card.drawChart = null;
      const markers = Object.fromEntries(fields.map((f) => [f, changeMarkers(changepoints, view.suite, trend, f)]));
      const flags = Object.fromEntries(fields.map((f) => [f, regressionFlags(trend, f)]));
      const onHover = (i) => {
        if (i === null || !trend.runs[i]) return;
        const values = fields.map((f) => `${f} ${formatValue(trend.values[f][i])}`).join(' · ');
        hover.replaceChildren(...runLine(trend.runs[i]), el('div', {}, values));
      };
      page.charts.push(trendChart(plot, trend, fields, { markers, flags, width, onHover }));
    };
    if (card.getBoundingClientRect().top < window.innerHeight) card.drawChart();
    else lazy.observe(card);
    drawn += 1;
  }
  if (drawn === 0) box.append(el('p', {}, 'No runs match these filters.'));
  return { drawn, runs: shown.length };
}

async function drawLatest(runs) {
  const { view, index } = page;
  const box = clear($('latest'));
  const run = latestRun(runs, index.suites[view.suite]?.latest_run);
  if (!run) return;
  const derived = await fetchJson(`derived/latest-${encodeURIComponent(view.suite)}.json`, { optional: true });
  box.append(el('h2', {}, `Latest run: ${run.run_id}`), el('div', { class: 'runline' }, runLine(run)));
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
    const curves = derived?.run_id === run.run_id
      ? clients.map((client) => ({ client, points: derived.percentiles?.[`${scenario}/${client}`] ?? [] })).filter((c) => c.points.length)
      : [];
    if (curves.length) page.charts.push(percentileChart(dist, curves, { width }));
    else dist.append(el('p', {}, 'No stored histograms for this run.'));
  }
  const fp = index.runners?.[run.runner];
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
  const paint = async (final, first) => {
    for (const c of page.charts) c.destroy();
    page.charts = [];
    const { drawn, runs: shown } = drawTrends(runs);
    status(`${view.suite}: ${shown} runs shown from ${months.length} month(s)${final ? '' : ', loading older months…'}; ${drawn} trend charts`);
    // First paint = the trend charts on screen; the latest run is below them.
    if (first) performance.mark('hft:first-paint');
    await drawLatest(runs);
  };
  try {
    if (months.length === 0) {
      status(`suite "${view.suite}" has no runs yet`);
    } else {
      runs.push(...await loadShard(view.suite, months[0]));
      if (token !== page.token) return;
      await paint(months.length === 1, true);
      const older = await Promise.all(months.slice(1).map((m) => loadShard(view.suite, m)));
      if (token !== page.token) return;
      if (older.length) {
        for (const o of older) runs.push(...o);
        await paint(true, false);
      }
    }
    document.body.dataset.state = 'ready';
  } catch (err) {
    if (token !== page.token) return;
    status(`cannot show the history: ${err.message}`, true);
    document.body.dataset.state = 'error';
  }
}

async function main() {
  try {
    page.index = await fetchJson('data/index.json');
    const problem = storeProblem(page.index);
    if (problem) throw new Error(problem);
    page.changepoints = await fetchJson('data/changepoints.json', { optional: true });
  } catch (err) {
    status(`cannot read the history store: ${err.message}`, true);
    document.body.dataset.state = 'error';
    return;
  }
  page.view = parseView(location.search, page.index);
  history.replaceState(null, '', serializeView(page.view));
  $('updated').textContent = `store updated ${page.index.updated_at ?? '?'}`;
  window.addEventListener('popstate', () => {
    page.view = parseView(location.search, page.index);
    renderFilters();
    render();
  });
  renderFilters();
  await render();
}

main();
