// GET /metrics: Prometheus text format (../shared/spec/contract.md "Operations"). Open, unless
// METRICS_TOKEN is set: then only `Authorization: Bearer $METRICS_TOKEN` reads it. The fleet's
// figures are cached for an interval (api/metrics.ts).
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation } from '../../defineOperation.ts';

const EXAMPLE = `# HELP http_request_duration_seconds HTTP requests by method, route (the operation path, or "other") and status, with their durations.
# TYPE http_request_duration_seconds histogram
http_request_duration_seconds_bucket{le="0.005",method="GET",route="/v1/datasets/:id",status="200"} 41
http_request_duration_seconds_count{method="GET",route="/v1/datasets/:id",status="200"} 42
# HELP dataset_builds_total Finished version builds by outcome.
# TYPE dataset_builds_total counter
dataset_builds_total{outcome="active"} 12
dataset_builds_total{outcome="failed"} 3
# HELP queue_jobs_waiting Jobs waiting in each queue (created or to retry).
# TYPE queue_jobs_waiting gauge
queue_jobs_waiting{queue="build-version"} 0
`;

const sameToken = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

export default defineOperation({
  operationId: 'getServiceMetrics',
  method: 'get',
  path: '/metrics',
  surface: 'public',
  tags: ['Operations'],
  summary: 'Prometheus metrics',
  description:
    "This process's metrics and HTTP requests by route and status with latency histograms, and the fleet's figures read from the database " +
    '(builds and exports by outcome with durations and rows, queue depth and oldest waiting job, webhook deliveries by outcome). ' +
    'The fleet figures are read from the database at most once per METRICS_FLEET_INTERVAL_MS (15 s by default) however often this is scraped; ' +
    'metrics_fleet_read_timestamp_seconds says when. Open unless METRICS_TOKEN is set; then it needs `Authorization: Bearer $METRICS_TOKEN` ' +
    '(a service whose BASE_URL is not a loopback address warns at start when it is unset).',
  responses: { 200: { description: 'The metrics, in the Prometheus text format.', contentType: 'text/plain; version=0.0.4', schema: z.string(), example: EXAMPLE } },
  problems: ['unauthorized'],
  async handle({ req, res, deps }) {
    const token = deps.config.metricsToken;
    if (token !== undefined) {
      const given = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1];
      if (given === undefined || !sameToken(given, token)) {
        throw new Problem('unauthorized', 'Reading the metrics needs Authorization: Bearer with the METRICS_TOKEN of this service.', {
          headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
        });
      }
    }
    if (!deps.metrics) throw new Problem('not-found', 'This process does not measure itself.');
    const text = await deps.metrics.text();
    res.status(200).type(deps.metrics.registry.contentType).send(text);
  },
});
