// The view (which suite, scenario, client, metric, branch, runner, range) and its URL form.
// Pure: no DOM, so node --test checks it; the URL is the one source of the view, so a
// copied link shows the same charts.

export const SCHEMA_VERSION = 1;

/** Metric choices: what each draws in a trend chart. */
export const METRICS = {
  latency: { label: 'latency p50 / p99 / p99.9 (µs)', fields: ['p50_us', 'p99_us', 'p999_us'] },
  p50_us: { label: 'p50 (µs)', fields: ['p50_us'] },
  p99_us: { label: 'p99 (µs)', fields: ['p99_us'] },
  p999_us: { label: 'p99.9 (µs)', fields: ['p999_us'] },
  throughput_rps: { label: 'throughput (orders/s)', fields: ['throughput_rps'] },
  memory_bytes_per_order: { label: 'server memory per order (bytes)', fields: ['memory_bytes_per_order'] },
};

/** How many months of shards a range loads (newest first). */
export const RANGES = { '3m': 3, '12m': 12, all: Infinity };

export const KEYS = ['suite', 'scenario', 'client', 'metric', 'branch', 'runner', 'range'];
/** Beyond the filters: the two runs compared (run ids) and the table's sort. */
export const SORTS = ['status', 'change', '-change', 'name'];
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

// URL and store keys are data: `in` and obj[key] would find Object.prototype's "constructor".
const hasOwn = (obj, key) => obj !== null && typeof obj === 'object' && Object.hasOwn(obj, key);

/** The allowed values of every filter, from the store's index and the chosen suite. */
export function choices(index, suite) {
  const suites = Object.keys(index.suites ?? {}).sort();
  const s = hasOwn(index.suites, suite) ? index.suites[suite] : { series: [] };
  const uniq = (xs) => [...new Set(xs)].sort();
  return {
    suite: suites,
    scenario: ['all', ...uniq(s.series.map((x) => x.scenario))],
    client: ['all', ...uniq(s.series.map((x) => x.client))],
    metric: Object.keys(METRICS),
    branch: ['all', ...uniq(index.branches ?? [])],
    runner: ['all', ...Object.keys(index.runners ?? {}).sort()],
    range: Object.keys(RANGES),
  };
}

function defaults(index) {
  const suites = Object.keys(index.suites ?? {}).sort();
  const suite = suites.includes('standard') ? 'standard' : (suites[0] ?? '');
  const branches = index.branches ?? [];
  return {
    suite,
    scenario: 'all',
    client: 'all',
    metric: 'latency',
    branch: branches.includes('main') ? 'main' : 'all',
    runner: 'all',
    range: '3m',
    a: '',
    b: '',
    sort: 'status',
  };
}

/** The view a query string asks for; unknown or stale values fall back to the default. */
export function parseView(search, index) {
  const params = new URLSearchParams(search);
  const view = defaults(index);
  const suite = params.get('suite');
  if (suite !== null && hasOwn(index.suites, suite)) view.suite = suite;
  const allowed = choices(index, view.suite);
  for (const key of KEYS) {
    if (key === 'suite') continue;
    const value = params.get(key);
    if (value !== null && allowed[key].includes(value)) view[key] = value;
  }
  for (const key of ['a', 'b']) {
    const id = params.get(key);
    if (id !== null && RUN_ID.test(id)) view[key] = id;
  }
  if (SORTS.includes(params.get('sort'))) view.sort = params.get('sort');
  return view;
}

/** The query string of a view, keys in a fixed order so equal views give equal links. */
export function serializeView(view) {
  const params = new URLSearchParams();
  for (const key of KEYS) params.set(key, view[key]);
  for (const key of ['a', 'b']) if (view[key]) params.set(key, view[key]);
  if (view.sort && view.sort !== 'status') params.set('sort', view.sort);
  return `?${params.toString()}`;
}

/** The shard months a range needs, newest first (the first one is painted first). */
export function shardsFor(index, suite, range) {
  const months = [...((hasOwn(index.suites, suite) && index.suites[suite].shards) || [])].sort().reverse();
  return months.slice(0, Math.min(months.length, RANGES[range] ?? 3));
}

/** A clear error for a store this page cannot read, or null when it can. */
export function storeProblem(index) {
  if (index === null || typeof index !== 'object') return 'data/index.json is not a JSON object';
  if (!Number.isInteger(index.schema_version)) return 'data/index.json has no integer schema_version';
  if (index.schema_version > SCHEMA_VERSION) {
    return `the history store is schema_version ${index.schema_version}, newer than this dashboard (${SCHEMA_VERSION}); republish the site from a newer hft-bench`;
  }
  if (typeof index.suites !== 'object' || index.suites === null) return 'data/index.json has no "suites" object';
  return null;
}

/** The shard month of a run id (run_YYYYMMDDThhmmssZ…), or null. */
export function monthOfRun(runId) {
  const m = /^run_(\d{4})(\d{2})\d{2}T/.exec(runId ?? '');
  return m ? `${m[1]}-${m[2]}` : null;
}
