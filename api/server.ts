// The web process's parts: a pool, the usage meter and a listening HTTP server, stopped
// gracefully (stop accepting, let in-flight requests finish, flush usage, close the pool).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Config } from '../shared/platform/config.ts';
import { createPool, type Pool } from '../shared/platform/db.ts';
import type { Logger } from '../shared/platform/log.ts';
import { migrate } from '../shared/platform/migrate.ts';
import { problemTypes } from '../shared/platform/problems.ts';
import { createBlobStore } from '../shared/blobs/createBlobStore.ts';
import { createResumableReception } from './reception/resumable.ts';
import { SecretBox } from '../shared/platform/sealedSecrets.ts';
import { createBoss, ensureQueues } from '../shared/platform/boss.ts';
import { UsageMeter } from '../shared/tenancy/usage.ts';
import { VersionOutcomes } from '../shared/domain/versionOutcomes.ts';
import { createApp } from './app.ts';
import { createMetrics } from './metrics.ts';
import type { Deps } from './defineOperation.ts';
import { loadOAuthKeys } from '../shared/oauth/keys.ts';
import { createAuthorizationServer } from './oauth/provider.ts';

/**
 * A request Node's HTTP parser cannot read (a malformed request line or header, headers too
 * large): answered with our problem document, as every other refusal, instead of Node's bare 400.
 */
function refuseUnreadableRequest(errorsBase: string, log: Logger) {
  return (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const { title, status } = problemTypes['bad-request'];
    const body = JSON.stringify({ type: `${errorsBase}/bad-request`, title, status, detail: 'The request could not be read as HTTP/1.1: its request line or a header is malformed, or its headers are too large.' });
    socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    log.info({ code: error.code }, 'request refused: not readable as HTTP');
  };
}

export type RunningApi = { server: Server; pool: Pool; port: number; url: string; oauth: Deps['oauth']; stop(): Promise<void> };

export async function startApi(config: Config, databaseUrl: string, log: Logger): Promise<RunningApi> {
  const pool = createPool(databaseUrl, config.databasePoolSize, 'dataset-service-web');
  let oauthKeys;
  try {
    await migrate(pool);
    oauthKeys = await loadOAuthKeys(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  const boss = createBoss(databaseUrl, 'producer', log);
  const outcomes = new VersionOutcomes(databaseUrl, log);
  try {
    await boss.start();
    await ensureQueues(boss, { heartbeatSeconds: config.queueHeartbeatSeconds });
    await outcomes.start();
  } catch (error) {
    await boss.stop({ graceful: false }).catch(() => {});
    await pool.end();
    throw error;
  }
  const meter = new UsageMeter(pool, log, config.usageFlushMs);
  meter.start();
  const blobs = await createBlobStore(config, pool);
  const oauth = { provider: createAuthorizationServer(config, pool, log, oauthKeys), keys: oauthKeys };
  const metrics = createMetrics(pool, config.metricsFleetIntervalMs);
  if (config.metricsToken === undefined && !config.developmentInstance) {
    log.warn({ baseUrl: config.baseUrl }, 'METRICS_TOKEN is unset: GET /metrics is open to anyone who can reach this service; set it (16 characters or more) to require Authorization: Bearer');
  }
  const resumable = createResumableReception({ config, pool, blobs, log }, databaseUrl);
  const secrets = new SecretBox(config.webhookSecretsKey, pool);
  const server = createServer(createApp({ config, pool, log, meter, boss, outcomes, blobs, resumable, secrets, oauth, metrics }));
  server.keepAliveTimeout = 65_000;
  server.on('clientError', refuseUnreadableRequest(config.errorsBase, log));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  log.info({ port }, 'api listening');

  const stop = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Requests waiting for a build answer now (202) instead of holding the shutdown up.
    const listenerStopped = outcomes.stop();
    // Keep-alive connections that finish their request are closed rather than kept waiting.
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    // Requests still in flight after SHUTDOWN_TIMEOUT_MS are cut: a client that stalls mid-body,
    // or whose body was refused half-read (a 413), held the shutdown until keepAliveTimeout.
    const cut = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs).unref();
    try {
      await closed;
    } finally {
      clearInterval(idle);
      clearTimeout(cut);
    }
    await listenerStopped;
    await boss.stop({ graceful: true, timeout: config.shutdownTimeoutMs });
    boss.removeAllListeners('error').on('error', () => {});
    await meter.stop();
    await resumable.stop();
    await blobs.close();
    await pool.end();
  };
  return { server, pool, port, url: `http://127.0.0.1:${port}`, oauth, stop };
}
