// One chart per benchmark of github-action-benchmark's data.js (window.BENCHMARK_DATA:
// entries[suite] = [{commit: {id, message, timestamp}, date, benches: [{name, value, unit}]}]).
// Text from the data is only ever set as text.
import uPlot from '../vendor/uPlot.esm.js';

const status = document.getElementById('status');
const charts = document.getElementById('charts');
const data = window.BENCHMARK_DATA;

function el(tag, text) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return node;
}

if (!data || typeof data.entries !== 'object' || data.entries === null) {
  status.textContent = 'No microbenchmark data yet: the first push to main after micro-bench writes data.js.';
} else {
  let count = 0;
  for (const [suite, runs] of Object.entries(data.entries)) {
    if (!Array.isArray(runs)) continue;
    const byBench = new Map();
    for (const run of runs) {
      for (const bench of run.benches ?? []) {
        if (!byBench.has(bench.name)) byBench.set(bench.name, { unit: bench.unit, x: [], y: [], commits: [] });
        const series = byBench.get(bench.name);
        series.x.push(Math.floor((run.date ?? 0) / 1000));
        series.y.push(Number(bench.value));
        series.commits.push(String(run.commit?.id ?? '').slice(0, 10));
      }
    }
    for (const [name, series] of byBench) {
      const box = el('section');
      box.append(el('h2', `${suite}: ${name}`));
      charts.append(box);
      new uPlot({
        width: 520,
        height: 240,
        series: [{}, { label: `${name} (${series.unit ?? ''})`, stroke: '#1f6feb', points: { show: true } }],
        axes: [{}, { label: String(series.unit ?? '') }],
      }, [series.x, series.y], box);
      count += 1;
    }
  }
  status.textContent = count ? `${count} benchmarks` : 'data.js holds no benchmark yet.';
}
