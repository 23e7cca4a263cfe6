#!/usr/bin/env node
// Assemble the publishable site: the static page, uPlot from node_modules, the history
// store as data/, derived/trend/ (shards without histograms), derived/latest-<suite>.json and
// derived/curves/<suite>/<run_id>.json (the compare view's distributions) and
// derived/creep-<suite>.json (main's creep since the reference). Usage:
//   node build-src/build.mjs --store <history store dir> --out <folder to publish> [--creep-reference SHA]
// The creep reference: --creep-reference, else the store index's `creep_reference`, else the
// oldest push of main in the store.
// --out may be the gh-pages worktree whose data/ already is the store.
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { deriveCreep, deriveLatest, deriveOpen, runCurves, slimShard } from './derive.mjs';
import { writeJsonAtomic } from '../lib/fsio.mjs';
import { check } from '../lib/schema.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');
const SCHEMA_VERSION = 1;
const UPLOT = join(ROOT, 'node_modules', 'uplot');
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/; // as hftbench's store/history.py SAFE_NAME
const MONTH = /^[0-9]{4}-(0[1-9]|1[0-2])$/;
// A run's stored verdict, as hftbench's stored_verdict.py StoredVerdict writes it (docs/history-store.md).
const VERDICT_SCHEMA = join(ROOT, 'lib', 'stored-verdict.schema.json');

function fail(message) {
  process.stderr.write(`build: ${message}\n`);
  process.exit(2);
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    fail(`cannot read ${path}: ${err.message}`);
  }
}

const SHA = /^[0-9a-f]{7,40}$/;

export function build({ store, out, creepReference = null }) {
  const index = readJson(join(store, 'index.json'));
  if (!Number.isInteger(index.schema_version) || index.schema_version > SCHEMA_VERSION) {
    fail(`${store}/index.json has schema_version ${index.schema_version}; this build reads ${SCHEMA_VERSION}: update gh-pages/ from a newer hft-bench`);
  }
  // Names from the store become paths of the site: plain names only (hftbench writes no other).
  for (const [suite, entry] of Object.entries(index.suites ?? {})) {
    if (!SAFE_NAME.test(suite)) fail(`${store}/index.json: suite name ${JSON.stringify(suite)} is not a plain name; fix or remove it`);
    for (const month of entry.shards ?? []) {
      if (!MONTH.test(month)) fail(`${store}/index.json: shard ${JSON.stringify(month)} of suite ${suite} is not YYYY-MM; fix or remove it`);
    }
  }
  const reference = creepReference ?? index.creep_reference ?? null;
  if (reference !== null && !SHA.test(String(reference))) fail(`creep reference ${JSON.stringify(reference)} is not a 7 to 40 digit lowercase hex sha`);
  if (!existsSync(join(UPLOT, 'dist', 'uPlot.esm.js'))) fail(`uPlot missing in ${UPLOT}: run 'npm ci' in gh-pages/ (or make deps)`);
  mkdirSync(out, { recursive: true });
  cpSync(join(ROOT, 'site'), out, { recursive: true });
  mkdirSync(join(out, 'vendor'), { recursive: true });
  for (const f of ['dist/uPlot.esm.js', 'dist/uPlot.min.css', 'LICENSE']) {
    cpSync(join(UPLOT, f), join(out, 'vendor', f.replace('dist/', '')));
  }
  const dataDir = join(out, 'data');
  if (!existsSync(dataDir) || realpathSync(dataDir) !== realpathSync(store)) {
    cpSync(store, dataDir, { recursive: true });
  }
  const warnings = [];
  const curveCache = new Map();
  const verdictSchema = readJson(VERDICT_SCHEMA);
  for (const [suite, entry] of Object.entries(index.suites ?? {})) {
    const allRuns = [];
    for (const month of entry.shards ?? []) {
      const shard = readJson(join(store, 'shards', suite, `${month}.json`));
      if (!Number.isInteger(shard.schema_version) || shard.schema_version > SCHEMA_VERSION) {
        fail(`${store}/shards/${suite}/${month}.json has schema_version ${shard.schema_version}; this build reads ${SCHEMA_VERSION}`);
      }
      writeJsonAtomic(join(out, 'derived', 'trend', suite, `${month}.json`), slimShard(shard));
      allRuns.push(...(shard.runs ?? []));
      for (const run of shard.runs ?? []) {
        const bad = run.verdict == null ? [] : check(verdictSchema, run.verdict, 'verdict');
        if (bad.length) warnings.push(`suite ${suite}, run ${run.run_id}: its verdict does not fit lib/stored-verdict.schema.json (${bad.slice(0, 3).join('; ')}); the page shows what it can of it`);
        const curves = runCurves(run, curveCache, (w) => warnings.push(`suite ${suite}, ${w}`));
        if (curves) writeJsonAtomic(join(out, 'derived', 'curves', suite, `${run.run_id}.json`), curves);
      }
    }
    writeJsonAtomic(join(out, 'derived', `open-${suite}.json`), deriveOpen(suite, allRuns));
    const creep = deriveCreep(suite, allRuns, reference);
    if (reference && creep.creep.reference && !creep.creep.reference.found) warnings.push(`suite ${suite}: the creep reference ${reference} is not among main's stored runs; its creep lines start at the oldest push`);
    writeJsonAtomic(join(out, 'derived', `creep-${suite}.json`), creep);
    const latest = deriveLatest(suite, entry, (month) => readJson(join(store, 'shards', suite, `${month}.json`)).runs ?? [], (w) => warnings.push(w));
    if (latest) writeJsonAtomic(join(out, 'derived', `latest-${suite}.json`), latest);
  }
  // Serve files as they are (no Jekyll processing of folders like _data).
  writeFileSync(join(out, '.nojekyll'), '');
  return { warnings, suites: Object.keys(index.suites ?? {}).length };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { store: { type: 'string' }, out: { type: 'string' }, 'creep-reference': { type: 'string' } } });
  if (!values.store || !values.out) fail('usage: node build-src/build.mjs --store <history store dir> --out <site dir> [--creep-reference SHA]');
  const { warnings, suites } = build({ store: resolve(values.store), out: resolve(values.out), creepReference: values['creep-reference'] || null });
  for (const w of warnings) process.stderr.write(`build: warning: ${w}\n`);
  process.stdout.write(`build: site for ${suites} suite(s) in ${values.out}\n`);
}
