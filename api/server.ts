import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Config } from '../config/config';
import type { Database } from '../db';
import { loadSpec } from '../spec';
import { createApp } from './app';
import { createHealthCheck } from './health';
import { collectionOperations } from './collections';
import type { Caller } from './operations';
import { compileRequestValidators, ajvOf } from './request-validation';
import { accountsOfActiveLogin } from '../db/visibility';
import { AuthenticationError } from '../domain/errors';
import type { WriteContext } from './writes';
import { CATALOGUE_TYPES } from './routes/catalogue';
import { collectionRegistry, declaredEvents, familyOperations, RESOURCE_FAMILIES } from './registry';
import type { ResourceFamily } from './families';
import { documentWith } from './families';
import { requireVersions } from '../db/collection-versions';
import { stringify } from 'yaml';
import { extensionOperations } from './routes/extensions';
import { authOperations } from './routes/auth';
import { discoveryOperations } from './routes/discovery';
import type { TemporalHandle, WorkflowStarter } from '../temporal/client';
import { connectWorkflowStarter, runOutboxRelay } from '../temporal/client';
import { createTokenService } from './token-service';
import { SERVICE_VERSION } from './version';
import { createCallerReads } from './authenticate';
import { runHousekeeping } from './housekeeping';
import { createIdempotency } from './idempotency';
import { createListener } from './listener';
import { memberExportOf } from './ixf-member-export';
import type { RequestGuards } from './operations';
import { addressKey, createRateLimits } from './rate-limits';
import { clearExpiredRateLimits } from '../db/rate-limit-store';
import type { RequestMetrics } from './metrics';
import { createApiMetrics } from './metrics';
import type { MetricsListener } from '../telemetry/metrics';
import { createMetricsRegistry, startMetricsListener } from '../telemetry/metrics';

export interface ApiService {
  server: Server;
  url: string;
  temporal: TemporalHandle;
  starter: WorkflowStarter;
  /** The metrics listener's `/metrics` URL, when METRICS_PORT (or the `metricsPort` option) is set. */
  metricsUrl: string | undefined;
  /**
   * Stops gracefully: no new connections are taken, requests under way finish (their answers close
   * the connection), then the relay and the Temporal connection stop. Requests still running after
   * `deadlineMs` (default SHUTDOWN_TIMEOUT) are cut off.
   */
  stop(deadlineMs?: number): Promise<void>;
}

/** Wires the API from its configuration and an open database, and starts listening. */
export async function startApi(options: {
  config: Config;
  logger: Logger;
  db: Database;
  /** Port to listen on; defaults to the configured one (0 picks a free port). */
  port?: number;
  /** Port of the metrics listener; defaults to METRICS_PORT (0 picks a free port, null: none). */
  metricsPort?: number | null;
  /**
   * In one of several API processes (api/cluster.ts): its series go to the primary, which serves
   * them on METRICS_PORT with the others', and it opens no listener of its own.
   */
  metricsToPrimary?: (registry: Registry) => void;
  relayIntervalMs?: number;
  /** How old an undelivered workflow start must be before the relay takes it over. */
  relayGraceMs?: number;
  /** How long a background send tries, and how long sends pause after one failed. */
  sending?: { withinMs?: number; pauseMs?: number };
  /**
   * The resource families it routes: those of api/registry.ts, and any declared beside them
   * (api/declared-family.ts), whose operations join the document it serves.
   */
  families?: readonly ResourceFamily[];
}): Promise<ApiService> {
  const { config, logger, db } = options;
  const metricsPort = options.metricsToPrimary
    ? null
    : options.metricsPort === undefined
      ? config.metricsPort
      : options.metricsPort;
  const metricsRegistry =
    metricsPort === null && !(options.metricsToPrimary && config.metricsPort !== null)
      ? undefined
      : createMetricsRegistry();
  if (metricsRegistry && options.metricsToPrimary) options.metricsToPrimary(metricsRegistry);
  const { temporal, starter } = connectWorkflowStarter({
    config,
    outbox: db.outbox,
    logger,
    sending: options.sending,
  });
  const checkHealth = createHealthCheck({
    releaseId: SERVICE_VERSION,
    timeoutMs: config.healthProbeTimeoutMs,
    dependencies: [
      { name: 'database', componentType: 'datastore', whenDown: 'fail', probe: () => db.ping() },
      { name: 'temporal', componentType: 'component', whenDown: 'warn', probe: () => temporal.ping() },
    ],
  });
  const metrics: RequestMetrics | undefined = metricsRegistry
    ? createApiMetrics({
        registry: metricsRegistry,
        sequelize: db.sequelize,
        outbox: db.outbox,
        health: checkHealth,
        logger,
      })
    : undefined;
  const tokens = createTokenService({
    signingKey: config.tokenSigningKey,
    verificationKeys: config.tokenVerificationKeys,
    accessTokenTtlSeconds: config.accessTokenTtlSeconds,
    refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
    refreshFamilyTtlSeconds: config.refreshFamilyTtlSeconds,
  });
  const callers = createCallerReads({ actingFor: (login) => accountsOfActiveLogin(db.sequelize, login) });
  const limits = createRateLimits({
    sequelize: db.sequelize,
    logger,
    onRefused: metrics?.countRateLimitRefusal,
    settings: config.rateLimits,
  });
  const guards: RequestGuards = {
    anonymous: (req, operationId) =>
      operationId.startsWith('auth_')
        ? limits.authByAddress(addressKey(req.ip))
        : limits.byAddress(addressKey(req.ip)),
    caller: (_req, caller) => limits.byAccount(caller.accountId),
  };
  const families = options.families ?? RESOURCE_FAMILIES;
  const document = documentWith(loadSpec(), families);
  await requireVersions(
    db.sequelize,
    families.flatMap((family) => family.versioned ?? []),
  );
  // Read with the caller's key for every request (api/authenticate.ts).
  const visibility = (caller: Caller) =>
    Promise.resolve({ accountId: caller.accountId, accounts: caller.accounts });
  const registry = collectionRegistry(document, families);
  const ajv = ajvOf(document);
  const validators = compileRequestValidators(document, ajv);
  const writes: WriteContext = {
    scope(caller) {
      if (!caller) throw new AuthenticationError('this operation needs a bearer token');
      return visibility(caller);
    },
  };
  const { app } = createApp({
    logger,
    document,
    ajv,
    validators,
    tokens,
    callers,
    guards,
    idempotency: createIdempotency(db.idempotencyKeys),
    trustProxy: config.trustProxy,
    publicBaseUrl: config.publicBaseUrl,
    ...(document === loadSpec() ? {} : { specText: stringify(document) }),
    metrics,
    memberExport: {
      read: async () => memberExportOf(await db.memberExport.read(), config.ixfExport, new Date()),
      maxAgeSeconds: config.ixfExport.maxAgeSeconds,
    },
    operations: (mounted) => [
      ...authOperations({
        credentials: db.credentials,
        tokens,
        limitFailures: (context, apiKey, verify) =>
          limits.login({ apiKey, address: addressKey(context.address) }, verify),
        onToken: metrics?.countToken,
      }),
      ...familyOperations(
        {
          db,
          document,
          validators,
          writes,
          settings: config,
        },
        families,
      ),
      ...collectionOperations({
        sequelize: db.sequelize,
        document,
        ajv,
        visibility,
        entries: registry,
      }),
      ...extensionOperations({
        sequelize: db.sequelize,
        document,
        ajv,
        publicBaseUrl: config.publicBaseUrl,
        visibility,
        registry,
        declaredEvents: declaredEvents(families),
      }),
      ...discoveryOperations({
        checkHealth,
        serviceVersion: SERVICE_VERSION,
        mounted,
        supportedTypes: CATALOGUE_TYPES,
      }),
    ],
  });
  const port = options.port ?? config.port;
  // Express decides which peers are proxies (TRUST_PROXY): the same peers name the client in req.ip
  // and escape the limit of connections per address, since each of their connections carries others.
  const trusted = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  const server = createListener(
    app,
    {
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.requestHeadersTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      maxConnections: config.maxConnections,
      maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      isProxy: (address) => trusted(address, 0),
      onRefused: () => metrics?.countRateLimitRefusal('connections_per_address'),
    },
    logger,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address ? address.port : port;
  let metricsListener: MetricsListener | undefined;
  if (metricsRegistry && metricsPort !== null) {
    try {
      metricsListener = await startMetricsListener({
        registry: metricsRegistry,
        host: config.metricsHost,
        port: metricsPort,
        logger,
      });
    } catch (error) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
  }
  // Every committed write's workflow messages go out in the background, from here alone; the relay
  // sends what they leave.
  const stopSending = db.outbox.sendCommittedWith((message) => starter.sendSoon(message));
  const stopRelay = runOutboxRelay({
    starter,
    outbox: db.outbox,
    logger,
    intervalMs: options.relayIntervalMs,
    graceMs: options.relayGraceMs,
    retentionMs: config.outboxRetentionSeconds * 1000,
  });
  const stopHousekeeping = runHousekeeping({
    logger,
    chores: [
      { name: 'expired refresh tokens', run: () => db.credentials.purgeExpiredRefreshTokens() },
      { name: 'expired idempotency keys', run: () => db.idempotencyKeys.purgeExpired() },
      { name: 'expired rate-limit counters', run: () => clearExpiredRateLimits(db.sequelize) },
      {
        name: 'events past their retention',
        run: () => db.events.purgeBefore(new Date(Date.now() - config.eventRetentionSeconds * 1000)),
      },
    ],
  });
  // Once stopping, every answer closes its connection, so that clients open their next request
  // elsewhere and the server can close; answers begun before keep their headers and the connection
  // is closed once it is idle.
  let draining = false;
  const underWay = new Set<ServerResponse>();
  server.on('request', (_request, response: ServerResponse) => {
    if (draining) response.setHeader('Connection', 'close');
    underWay.add(response);
    response.once('close', () => {
      underWay.delete(response);
      if (draining) setImmediate(() => server.closeIdleConnections());
    });
  });
  return {
    server,
    url: `http://127.0.0.1:${boundPort}/api/v2`,
    temporal,
    starter,
    metricsUrl: metricsListener?.url,
    async stop(deadlineMs = config.shutdownTimeoutSeconds * 1000) {
      draining = true;
      for (const response of underWay) if (!response.headersSent) response.setHeader('Connection', 'close');
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const cutOff = setTimeout(() => {
        logger.warn({ deadlineMs }, 'requests still running at the shutdown deadline are cut off');
        server.closeAllConnections();
      }, deadlineMs);
      try {
        await closed;
      } finally {
        clearTimeout(cutOff);
      }
      stopSending();
      await starter.settle();
      await stopRelay();
      await stopHousekeeping();
      await metricsListener?.close();
      await temporal.close();
    },
  };
}
