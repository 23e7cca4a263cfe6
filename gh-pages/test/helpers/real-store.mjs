// A history store made by real `hftbench` runs (tiny: the quick suite, a few hundred orders):
// one single run, one commit's two rounds (so a run-level spread) stored with a gate verdict
// flagging a regression and carrying a bisect culprit, and one entry whose commit message is an
// XSS probe. This is what the browser test reads.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
export const XSS = '<img src=x onerror=alert(1)>';
export const CULPRIT_SUBJECT = 'order book: <b>copy</b> the level';
const HFTBENCH = join(ROOT, '.venv', 'bin', 'hftbench');

function hftbench(...args) {
  execFileSync(HFTBENCH, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
}

/** Clients of the quick suite that `make build` put in bin/, two at most (rust and c first). */
export function builtClients() {
  return ['rust', 'c', 'go', 'cpp', 'hft', 'python'].filter((c) => existsSync(join(ROOT, 'bin', `client-${c}`))).slice(0, 2);
}

function editJson(path, change) {
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  change(doc);
  writeFileSync(path, JSON.stringify(doc));
}
const editRun = (folder, change) => editJson(join(folder, 'results.json'), change);

function run(out, clients) {
  hftbench('run', '--suite', 'quick', '--clients', clients.join(','), '--orders', '300', '--warmup', '30',
    '--connections', '4', '--no-floor', '--no-report', '--quiet', '--out', out);
  // Recorded as CI records main, whatever this checkout's branch (or detached HEAD) is.
  editRun(out, (doc) => { doc.git = { ...doc.git, branch: 'main' }; });
}

/** The verdict of the rounds entry: its first series' P99 a regression, bisected to a culprit. */
function regressionVerdict(clients, scenario) {
  const gated = (metric, ratio, verdict) => ({ scenario, client: clients[0], metric, gated: true, ratio, ci: [ratio - 0.08, ratio + 0.08], mde: 1.08, verdict,
    threshold: 1.1, base_value: 20, head_value: 20 * ratio });
  return {
    status: 'regression', base: { commit: 'a'.repeat(40) }, partial: false,
    flags: [{ scenario, client: clients[0], metric: 'p99_us', ratio: 1.3, verdict: 'regression' }],
    results: [gated('p99_us', 1.3, 'regression'), gated('p50_us', 1.01, 'no_change')],
    bisect: { status: 'culprit', good: 'a'.repeat(40), bad: 'c'.repeat(40), culprit: { sha: 'c'.repeat(40), subject: CULPRIT_SUBJECT }, reason: 'bisected 3 commits' },
  };
}

/** Make the store in `dir`/store; returns its path, the clients, the scenario and run ids. */
export function realStore(dir) {
  const missing = [HFTBENCH, join(ROOT, 'bin', 'hft-server')].filter((p) => !existsSync(p));
  const clients = builtClients();
  if (missing.length || clients.length === 0) {
    throw new Error(`the browser test needs real runs: missing ${[...missing, ...(clients.length ? [] : ['bin/client-*'])].join(', ')}; run 'make build' first`);
  }
  const store = join(dir, 'store');
  run(join(dir, 'run_a'), clients);
  hftbench('history', 'add', '--store', store, join(dir, 'run_a'));
  // One commit's two rounds: one entry with a spread, stored with the gate's verdict.
  const rounds = join(dir, 'rounds');
  mkdirSync(rounds);
  const roundDirs = ['run_r1', 'run_r2'].map((name) => join(rounds, name));
  for (const out of roundDirs) run(out, clients);
  const scenario = JSON.parse(readFileSync(join(roundDirs[0], 'results.json'), 'utf8')).cells?.[0]?.scenario ?? 'small';
  writeFileSync(join(dir, 'verdict.json'), JSON.stringify(regressionVerdict(clients, scenario)));
  hftbench('history', 'add', '--store', store, rounds, '--verdict', join(dir, 'verdict.json'));
  // The store keeps the verdict's bisect object (another change adds it); until then, add it here.
  for (const month of readdirSync(join(store, 'shards', 'quick'))) {
    editJson(join(store, 'shards', 'quick', month), (shard) => {
      for (const r of shard.runs) if (r.verdict && !r.verdict.bisect) r.verdict.bisect = regressionVerdict(clients, scenario).bisect;
    });
  }
  // The probe: a copy of a round, one minute later, whose commit message is markup.
  const probe = join(dir, 'run_xss');
  cpSync(roundDirs[1], probe, { recursive: true });
  editRun(probe, (doc) => {
    doc.run_id = `${doc.run_id}_xss`;
    doc.started_at = new Date(Date.parse(doc.started_at) + 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    doc.git = { ...doc.git, message: XSS, author: XSS };
  });
  hftbench('history', 'add', '--store', store, probe);
  hftbench('history', 'changepoints', '--store', store);
  return { store, clients, scenario };
}
