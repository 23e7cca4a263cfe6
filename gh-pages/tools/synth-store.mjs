#!/usr/bin/env node
// A synthetic history store in the contract format (index.json, shards/<suite>/<YYYY-MM>.json,
// changepoints.json), for developing the dashboard and for the first-paint benchmark.
// Deterministic for a seed; every series gets one step change, recorded as a change point,
// and the run after each step carries a gate verdict flagging it. Every run has 16 rounds (a
// run-level spread of P50 and P99) and a job link; the first `gated` series are judged in every
// verdict (gated rows, with the headline and row texts `history add` stores beside them), and the
// first regression among them carries a bisect culprit. Verdicts are stored at the gate's 95 %.
// `creep` ({pushes, step, reference, uncompared}, counted back from the newest commit) makes the
// first series slower by `step` at each of the last `pushes` commits (each passing the gate, ci ±1 %),
// names the commit `reference` back as the index's `creep_reference`, and stores the commit
// `uncompared` back without a verdict (null: none), so the creep chain breaks there.
// A pool of `runners` machines (default 2) takes the commits in turn: the second a server part
// 30 % faster, so the same series stand apart by level; each runner's runs see each step (at its
// first run from the step's commit on) as its own change point.
//   node tools/synth-store.mjs --out DIR [--commits 5000] [--scenarios 10] [--clients 5] [--runners 2]
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { encodeValues } from '../lib/hdr.mjs';
import { writeJsonAtomic } from '../lib/fsio.mjs';

function rng(seed) { // mulberry32
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A lognormal-ish latency histogram (ns) of `samples` values around `p50Us`. */
function histogram(random, p50Us, samples) {
  const values = Array.from({ length: samples }, () => {
    const z = Math.sqrt(-2 * Math.log(random() + 1e-12)) * Math.cos(2 * Math.PI * random());
    return p50Us * 1000 * Math.exp(0.5 * z);
  });
  return encodeValues(values);
}

const RUNNERS = [
  { id: 'a1b2c3d4e5f6', cpu_model: 'Intel(R) Core(TM) i7-14700K', cores: 28, kernel: '6.1.0-hft', governor: 'performance', isolated_cpus: '2-27', smt: false, tuned: true, speed: 1 },
  { id: '7e8f9a0b1c2d', cpu_model: 'AMD EPYC 9275F 24-Core Processor', cores: 48, kernel: '6.1.0-hft', governor: 'performance', isolated_cpus: '2-47', smt: false, tuned: true, speed: 0.7 },
];

// What `hftbench history add` stores for the page beside a verdict (docs/history-store.md): the
// headline, the column labels and each row's cell texts. The real texts are verdict_text.py's;
// these synthetic ones only take their shape, since the page shows whatever text is stored.
const COLUMNS = { icon: '', series: 'series', metric: 'metric', base: 'base', head: 'head', change: 'change', interval: '95% interval', could_detect: 'could detect', verdict: 'verdict' };
const ICON = { regression: '🔴', improvement: '🟢', no_change: '⚪' };
const LEAD = { regression: '❌ Regression', improvement: '✅ Improvement', no_change: '✅ No change' };
const RANK = { regression: 0, improvement: 2, no_change: 3 };
const pct = (x) => `${x >= 1 ? '+' : '-'}${Math.abs(100 * (x - 1)).toFixed(1)}%`;

function shownRow(g, headUs) {
  const change = `${g.ratio > 1.0005 ? '▲' : g.ratio < 0.9995 ? '▼' : '='} ${pct(g.ratio)}`;
  return { scenario: g.scenario, client: g.client, metric: g.metric, gated: true, verdict: g.verdict, cells: {
    icon: ICON[g.verdict], series: `${g.scenario}/${g.client}`, metric: g.metric === 'p99_us' ? 'P99' : 'P50',
    base: `${(headUs / g.ratio).toFixed(1)} µs`, head: `${headUs.toFixed(1)} µs`, change,
    interval: `${pct(g.ci[0])} … ${pct(g.ci[1])}`, could_detect: `≥ ${pct(g.mde)}`, verdict: g.verdict.replace('_', ' ') } };
}

function shownVerdict(status, rows) {
  const sorted = rows.map((r, i) => [r, i]).sort(([a, i], [b, j]) => RANK[a.verdict] - RANK[b.verdict] || i - j).map(([r]) => r);
  const hit = sorted.filter((r) => r.verdict === status).map((r) => `${r.cells.series} ${r.cells.metric} ${pct(r.ratio)}`);
  let headline = LEAD[status];
  if (status !== 'no_change' && hit.length) headline += `: ${hit.slice(0, 3).join(', ')}${hit.length > 3 ? ` and ${hit.length - 3} more` : ''}`;
  else if (status === 'no_change' && rows.length) headline += `: all ${rows.length} gated series × metrics within ±10%; each could have detected +5.0% or more`;
  return { headline, columns: COLUMNS, rows: sorted.map(({ ratio, ...row }) => row) };
}

export function synthStore({ out, commits = 5000, scenarios = 10, clients = 5, seed = 1, suite = 'standard', xss = false, gated = 4, spread = 0.03, runners = 2, creep = null }) {
  const random = rng(seed);
  const scenarioNames = Array.from({ length: scenarios }, (_, i) => ['small', 'medium', 'large', 'latency-1c', 'open-5k'][i] ?? `scenario-${i}`);
  const clientNames = Array.from({ length: clients }, (_, i) => ['python', 'c', 'cpp', 'rust', 'go', 'hft'][i] ?? `client-${i}`);
  const series = scenarioNames.flatMap((scenario) => clientNames.map((client) => ({ scenario, client })));
  const histograms = Array.from({ length: 32 }, (_, i) => histogram(random, 50 + 10 * i, 2000));
  const pool = RUNNERS.slice(0, Math.max(1, Math.min(runners, RUNNERS.length)));
  const start = Date.UTC(2024, 10, 1);
  const step = (730 * 86400e3) / commits;
  const base = series.map((_, i) => 60 + 7 * i);
  const stepAt = series.map(() => Math.floor(commits * (0.2 + 0.6 * random())));
  const stepSize = series.map(() => (random() < 0.5 ? 1.15 : 0.9));
  const shards = new Map();
  const changepoints = {};
  const runsOf = pool.map(() => 0); // each runner's runs so far: a change point's index in its own series
  const stepSeen = pool.map(() => series.map(() => false));
  let lastRunId = null;
  let prevCommit = null;
  let firstBisect = false;
  let creepReference = null;
  for (let c = 0; c < commits; c += 1) {
    const date = new Date(start + c * step);
    const iso = date.toISOString().replace(/\.\d{3}Z$/, 'Z');
    const runId = `run_${iso.replace(/[-:]/g, '')}_${String(c).padStart(5, '0')}`;
    const commit = createHash('sha1').update(`${seed}/${c}`).digest('hex');
    const r = c % pool.length;
    const runner = pool[r];
    const flags = [];
    const gatedRows = [];
    const shown = [];
    let bisect;
    const creeping = creep && c >= commits - creep.pushes; // this commit makes the first series slower
    const crept = creep ? creep.step ** Math.max(0, c - (commits - creep.pushes) + 1) : 1;
    const results = series.map((s, i) => {
      const level = base[i] * runner.speed * (c >= stepAt[i] ? stepSize[i] : 1) * (i === 0 ? crept : 1) * (1 + 0.03 * (random() - 0.5));
      if (c === stepAt[i] && stepSize[i] > 1) flags.push({ scenario: s.scenario, client: s.client, metric: 'p99_us', ratio: stepSize[i], verdict: 'regression' });
      if (i < gated) {
        const creepStep = creeping && i === 0;
        const ratio = creepStep ? creep.step * (1 + 0.004 * (random() - 0.5)) : c === stepAt[i] ? stepSize[i] : 1 + 0.02 * (random() - 0.5);
        const verdict = creepStep ? 'no_change' : c !== stepAt[i] ? 'no_change' : stepSize[i] > 1 ? 'regression' : 'improvement';
        const width = creepStep ? 0.01 : 0.03;
        for (const metric of ['p99_us', 'p50_us']) {
          const g = { scenario: s.scenario, client: s.client, metric, ratio: +ratio.toFixed(4),
            ci: [+(ratio * (1 - width)).toFixed(4), +(ratio * (1 + width)).toFixed(4)], mde: 1.05, verdict };
          gatedRows.push(g);
          shown.push({ ...shownRow(g, metric === 'p99_us' ? level * 2.5 : level), ratio: g.ratio });
        }
        if (verdict === 'regression' && !firstBisect) {
          firstBisect = true;
          bisect = { status: 'culprit', good: prevCommit, bad: null, culprit: { sha: null, subject: null }, reason: 'bisected 1 commit' };
        }
      }
      return {
        scenario: s.scenario, client: s.client, orders: 10000, ok: 10000, errors: 0, rounds: 16,
        spread: { p50_us: [+(level * (1 - spread / 2)).toFixed(2), +(level * (1 + spread / 2)).toFixed(2)], p99_us: [+(level * 2.5 * (1 - spread)).toFixed(2), +(level * 2.5 * (1 + spread)).toFixed(2)] },
        p50_us: +level.toFixed(2), p90_us: +(level * 1.6).toFixed(2), p99_us: +(level * 2.5).toFixed(2),
        p999_us: +(level * 4 * (1 + 0.2 * random())).toFixed(2), max_us: +(level * 9).toFixed(2),
        throughput_rps: +(1e6 / level * 20).toFixed(1),
        histogram: histograms[(i + c) % histograms.length],
      };
    });
    const message = xss && c === commits - 1 ? '<img src=x onerror=alert(1)>' : `commit ${c}: tune the order path`;
    if (bisect) Object.assign(bisect, { bad: commit, culprit: { sha: commit, subject: message } });
    const status = flags.length ? 'regression' : gatedRows.some((g) => g.verdict === 'improvement') ? 'improvement' : 'no_change';
    const run = {
      run_id: runId, date: iso, commit, branch: 'main', message, author: `dev${c % 7}`,
      url: `https://github.com/example/hft-bench/commit/${commit}`,
      job_url: `https://github.com/example/hft-bench/actions/runs/${1000000 + c}`, runner: runner.id, dirty: false,
      rounds: 16, results,
      verdict: creep?.uncompared && c === commits - creep.uncompared ? null
        : { status, base: prevCommit, partial: false, confidence: 0.95, flags, gated: gatedRows, ...(bisect ? { bisect } : {}), ...shownVerdict(status, shown) },
    };
    if (creep?.reference && c === commits - creep.reference) creepReference = commit;
    prevCommit = commit;
    const month = iso.slice(0, 7);
    if (!shards.has(month)) shards.set(month, []);
    shards.get(month).push(run);
    series.forEach((s, i) => {
      if (c < stepAt[i] || stepSeen[r][i]) return;
      stepSeen[r][i] = true;
      for (const metric of ['p50_us', 'p99_us', 'p999_us']) {
        const key = `${suite}/${s.scenario}/${s.client}/${metric}`;
        if (!changepoints[key]) changepoints[key] = [];
        changepoints[key].push({
          run_id: runId, commit, date: iso, runner: runner.id, index: runsOf[r], before: base[i] * runner.speed,
          after: base[i] * runner.speed * stepSize[i], change_pct: +((stepSize[i] - 1) * 100).toFixed(1), p_value: 0.001,
        });
      }
    });
    runsOf[r] += 1;
    lastRunId = runId;
  }
  const now = new Date(start + commits * step).toISOString().replace(/\.\d{3}Z$/, 'Z');
  for (const [month, runs] of shards) {
    writeJsonAtomic(join(out, 'shards', suite, `${month}.json`), { schema_version: 1, suite, month, runs });
  }
  writeJsonAtomic(join(out, 'changepoints.json'), { schema_version: 1, updated_at: now, series: changepoints });
  writeJsonAtomic(join(out, 'index.json'), {
    schema_version: 1, updated_at: now,
    suites: { [suite]: { shards: [...shards.keys()].sort(), runs: commits, series, latest_run: lastRunId } },
    branches: ['main'], runners: Object.fromEntries(pool.map(({ id, speed, ...fingerprint }) => [id, fingerprint])),
    ...(creepReference ? { creep_reference: creepReference } : {}),
  });
  return { shards: shards.size, series: series.length, runs: commits };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      out: { type: 'string' }, commits: { type: 'string', default: '5000' },
      scenarios: { type: 'string', default: '10' }, clients: { type: 'string', default: '5' },
      seed: { type: 'string', default: '1' }, xss: { type: 'boolean', default: false }, runners: { type: 'string', default: '2' },
    },
  });
  if (!values.out) {
    process.stderr.write('usage: node tools/synth-store.mjs --out DIR [--commits N] [--scenarios S] [--clients C] [--runners 1|2] [--xss]\n');
    process.exit(2);
  }
  const r = synthStore({ out: values.out, commits: +values.commits, scenarios: +values.scenarios, clients: +values.clients, seed: +values.seed, xss: values.xss, runners: +values.runners });
  process.stdout.write(`synth-store: ${r.runs} runs × ${r.series} series in ${r.shards} shards → ${values.out}\n`);
}
