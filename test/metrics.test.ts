// GET /metrics: the Prometheus text format, read back with a Prometheus text parser; the process's
// HTTP requests by route and status, and the fleet's builds, exports and queues from the database.
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { projectRoot } from '../shared/platform/paths.ts';
import parsePrometheusTextFormat, { type MetricFamily } from 'parse-prometheus-text-format';
import { eventually } from './support/eventually.ts';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { startService, useService } from './support/service.ts';

const TOKEN = 'metrics-token-0123456789';

describe('metrics', function () {
  this.timeout(30_000);
  let key: string;
  const svc = useService({ env: { METRICS_TOKEN: TOKEN } });
  before(async () => {
    ({ key } = await svc.tenant());
  });

  /** The scrape, parsed (families by name), and its text (the parser merges a histogram's labelled series, so those are read from the lines). */
  const scrape = async (): Promise<{ families: Map<string, MetricFamily>; sample(line: RegExp): number }> => {
    const res = await svc.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status, res.text).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
    const families = new Map(parsePrometheusTextFormat(res.text).map((f) => [f.name, f]));
    const sample = (line: RegExp) => Number(res.text.split('\n').find((l) => line.test(l))?.split(' ').at(-1));
    return { families, sample };
  };

  it('when METRICS_TOKEN is set, then /metrics needs it: none or another is 401', async () => {
    const none = await svc.request('/metrics');
    expect(none.status).to.equal(401);
    expect(none.json.type).to.equal(`${svc.config.errorsBase}/unauthorized`);
    expect((await svc.request('/metrics', { headers: { authorization: 'Bearer metrics-token-9876543210' } })).status).to.equal(401);
    expect((await svc.request('/metrics', { key })).status).to.equal(401);
  });

  it('when requests are served and versions built and exported, then the scrape parses and counts them by route, status and outcome', async () => {
    const ds = await newDataset(svc, key);
    expect((await postCsv(svc, key, ds, `${HEADER}\nm-1,Acme,,2026-01-01,2026-12-31,5,EUR\nm-2,Beta,,2026-01-01,2026-12-31,7,EUR\n`)).status).to.equal(201);
    expect((await postCsv(svc, key, ds, `${HEADER}\nm-3,,,2026-01-01,2026-12-31,5,EUR\n`)).status).to.equal(422);
    const requested = await svc.request(`/v1/datasets/${ds}/exports`, { key, json: { format: 'csv' } });
    await eventually(() => svc.request(`/v1/datasets/${ds}/exports/${requested.json.id}`, { key }), (r) => r.json.status === 'ready');
    await svc.request(`/v1/datasets/${ds}`, { key });

    const { families, sample } = await scrape();
    expect(families.get('http_request_duration_seconds')!.type).to.equal('HISTOGRAM');
    expect(sample(/^http_request_duration_seconds_count\{method="GET",route="\/v1\/datasets\/:id",status="200"\} /)).to.be.at.least(1);
    expect(sample(/^http_request_duration_seconds_count\{method="POST",route="\/v1\/datasets\/:id\/versions",status="422"\} /)).to.equal(1);
    // Routes are the operations' paths, never URLs with ids in them.
    expect(sample(new RegExp(`route="[^"]*${ds}`))).to.be.NaN;

    const builds = families.get('dataset_builds_total')!;
    expect(builds.type).to.equal('COUNTER');
    const byOutcome = Object.fromEntries(builds.metrics.map((m) => [m.labels!['outcome'], Number(m.value)]));
    expect(byOutcome).to.include({ active: 1, failed: 1 });
    const rows = families.get('dataset_builds_rows_total')!.metrics.find((m) => m.labels!['outcome'] === 'active');
    expect(Number(rows!.value)).to.equal(2);
    expect(families.get('dataset_builds_duration_seconds')!.type).to.equal('HISTOGRAM');
    expect(sample(/^dataset_builds_duration_seconds_count\{outcome="active"\} /)).to.equal(1);
    expect(sample(/^dataset_builds_duration_seconds_bucket\{le="\+Inf",outcome="failed"\} /)).to.equal(1);
    expect(Number(families.get('dataset_exports_total')!.metrics.find((m) => m.labels!['outcome'] === 'ready')!.value)).to.equal(1);
    expect(families.get('queue_jobs_waiting')!.type).to.equal('GAUGE');
    expect(families.has('process_resident_memory_bytes')).to.equal(true);
  });

  it('when the Grafana dashboard in the repository is loaded, then every metric its panels query is in the scrape', async () => {
    const dashboard = JSON.parse(await readFile(join(projectRoot, 'api', 'grafanaDashboard.json'), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
    const { families } = await scrape();
    expect(families.get('db_pool_waiting_requests')!.type).to.equal('GAUGE');
    const queried = new Set<string>();
    for (const panel of dashboard.panels) {
      expect(panel.targets.length, panel.title).to.be.above(0);
      // The dashboard writes every metric with a selector ({…} or […]): the names before one.
      for (const target of panel.targets) for (const [, name] of target.expr.matchAll(/([a-z_][a-z0-9_]*)\{/g)) queried.add(name!);
    }
    expect(queried.size).to.be.above(10);
    for (const name of queried) {
      const family = name.replace(/_(bucket|count|sum)$/, '');
      expect(families.has(family) || families.has(name), `${name} is not in the scrape`).to.equal(true);
    }
  });
});

describe('metrics read from the database', function () {
  this.timeout(60_000);
  // Open (no METRICS_TOKEN) on a development instance; the fleet's figures read at most once a minute.
  const svc = useService({ env: { METRICS_FLEET_INTERVAL_MS: '60000' } });

  const scrape = async () => {
    const res = await svc.request('/metrics');
    expect(res.status, res.text).to.equal(200);
    const value = (name: RegExp) => Number(res.text.split('\n').find((l) => name.test(l))?.split(' ').at(-1));
    return { readAt: value(/^metrics_fleet_read_timestamp_seconds /), activeBuilds: value(/^dataset_builds_total\{outcome="active"\} /) };
  };

  it('when /metrics is scraped often and many at once, then the fleet figures are read from the database once per interval, not at every scrape', async () => {
    const { key } = await svc.tenant();
    const ds = await newDataset(svc, key);
    expect((await postCsv(svc, key, ds, `${HEADER}\nm-1,Acme,,2026-01-01,2026-12-31,5,EUR\n`)).status).to.equal(201);
    const first = await scrape();
    expect(first.activeBuilds).to.equal(1);
    // Another build: the figures served are still those read at the first scrape.
    expect((await postCsv(svc, key, await newDataset(svc, key), `${HEADER}\nm-2,Beta,,2026-01-01,2026-12-31,7,EUR\n`)).status).to.equal(201);
    const later = [...(await Promise.all(Array.from({ length: 20 }, () => scrape()))), await scrape(), await scrape()];
    for (const s of later) expect(s.activeBuilds).to.equal(1);
    expect(first.readAt).to.be.within(Date.now() / 1000 - 60, Date.now() / 1000 + 1);
    for (const s of later) expect(s).to.deep.equal(first);
    expect(svc.logs()).not.to.include('METRICS_TOKEN is unset');
  });

  it('when METRICS_TOKEN is unset outside development, then the service warns at start; with it set, or on a development instance, it does not', async () => {
    const open = await startService({ worker: false, env: { BASE_URL: 'https://datasets.example.com' } });
    const guarded = await startService({ worker: false, env: { BASE_URL: 'https://datasets.example.com', METRICS_TOKEN: 'metrics-token-0123456789' } });
    try {
      expect(open.logs()).to.match(/"level":40.*METRICS_TOKEN is unset/);
      expect(guarded.logs()).not.to.include('METRICS_TOKEN is unset');
      expect(guarded.logs()).not.to.include('metrics-token-0123456789');
    } finally {
      await open.stop();
      await guarded.stop();
    }
  });
});
