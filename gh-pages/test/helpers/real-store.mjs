// A history store made by real `hftbench` runs (tiny: the quick suite, a few hundred orders),
// plus one entry whose commit message is an XSS probe. This is what the browser test reads.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(import.meta.url), '../../../..');
export const XSS = '<img src=x onerror=alert(1)>';
const HFTBENCH = join(ROOT, '.venv', 'bin', 'hftbench');

function hftbench(...args) {
  execFileSync(HFTBENCH, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
}

/** Clients of the quick suite that `make build` put in bin/, two at most (rust and c first). */
export function builtClients() {
  return ['rust', 'c', 'go', 'cpp', 'hft', 'python'].filter((c) => existsSync(join(ROOT, 'bin', `client-${c}`))).slice(0, 2);
}

function editRun(folder, change) {
  const path = join(folder, 'results.json');
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  change(doc);
  writeFileSync(path, JSON.stringify(doc));
}

/** Make the store in `dir`/store from two runs and the XSS entry; returns its path. */
export function realStore(dir) {
  const missing = [HFTBENCH, join(ROOT, 'bin', 'hft-server')].filter((p) => !existsSync(p));
  const clients = builtClients();
  if (missing.length || clients.length === 0) {
    throw new Error(`the browser test needs real runs: missing ${[...missing, ...(clients.length ? [] : ['bin/client-*'])].join(', ')}; run 'make build' first`);
  }
  const store = join(dir, 'store');
  const runs = ['run_a', 'run_b'].map((name) => join(dir, name));
  for (const out of runs) {
    hftbench('run', '--suite', 'quick', '--clients', clients.join(','), '--orders', '300', '--warmup', '30',
      '--connections', '4', '--no-floor', '--no-report', '--quiet', '--out', out);
    // Recorded as CI records main, whatever this checkout's branch (or detached HEAD) is.
    editRun(out, (doc) => { doc.git = { ...doc.git, branch: 'main' }; });
    hftbench('history', 'add', '--store', store, out);
  }
  // The probe: a copy of the second run, one second later, whose commit message is markup.
  const probe = join(dir, 'run_xss');
  cpSync(runs[1], probe, { recursive: true });
  editRun(probe, (doc) => {
    doc.run_id = `${doc.run_id}_xss`;
    doc.started_at = new Date(Date.parse(doc.started_at) + 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    doc.git = { ...doc.git, message: XSS, author: XSS };
  });
  hftbench('history', 'add', '--store', store, probe);
  hftbench('history', 'changepoints', '--store', store);
  return { store, clients };
}
