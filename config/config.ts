/**
 * Service configuration, read once from the environment and validated at start-up.
 * Every problem names the variable so that a bad deployment fails loudly and clearly.
 */

import { availableParallelism } from 'node:os';
import { ConfigError } from './config-error';
import { CONFIG_VARIABLES, QUOTA_VARIABLES, RATE_LIMIT_VARIABLES } from './config-variables';
import type { QuotaVariableName, RateLimitName } from './config-variables';
import { resolveFileVariables } from './file-variables';
import type { LogFormatSetting } from './log-format';
import { parseLogFormat } from './log-format';
import type { DeviceDriverName, RateLimit } from './parsers';
import {
  parseDatabaseUrl,
  parseDeviceDriver,
  parseDuration,
  parseIdsByLan,
  parseInteger,
  parseKey,
  parseKeyList,
  parseName,
  parseOptionalPort,
  parseRateLimit,
  parseTemporalAddress,
} from './parsers';
import type { RtrCache } from './rpki-rtr';
import { parseRtrCaches } from './rpki-rtr';

export { ConfigError } from './config-error';
export { CONFIG_VARIABLES } from './config-variables';
export type { ConfigVariable, QuotaVariableName, RateLimitName } from './config-variables';
export { FILE_SUFFIX, resolveFileVariables } from './file-variables';
export { LOG_FORMATS, chooseLogFormat } from './log-format';
export type { LogFormat, LogFormatSetting } from './log-format';
export {
  DEVICE_DRIVER_NAMES,
  parseDuration,
  parseIdsByLan,
  parseKey,
  parseKeyList,
  parseRateLimit,
} from './parsers';
export type { DeviceDriverName, RateLimit } from './parsers';
export { parseRtrCaches } from './rpki-rtr';
export type { RtrCache } from './rpki-rtr';

export interface Config {
  nodeEnv: string;
  host: string;
  port: number;
  /** API processes sharing the port on this host (API_PROCESSES); 1 runs the API in one process. */
  apiProcesses: number;
  /** Public URL of the API base path (…/api/v2), used in links the API hands out. */
  publicBaseUrl: string;
  databaseUrl: string;
  databasePoolMax: number;
  /** Undefined means "local development": the dev stack starts its own Temporal server. */
  temporalAddress: string | undefined;
  temporalNamespace: string;
  temporalTaskQueue: string;
  /** HMAC key that signs access and refresh tokens (HS256), at least 32 bytes. */
  tokenSigningKey: Uint8Array;
  /** HMAC key under which API secrets are hashed before they are stored. */
  apiSecretHashKey: Uint8Array;
  /**
   * Previous signing keys, after the first of TOKEN_SIGNING_KEY: they verify the tokens they signed
   * until those expire, and sign none (key rotation).
   */
  tokenVerificationKeys: Uint8Array[];
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /** How long a login lasts, however often its refresh tokens are used (seconds). */
  refreshFamilyTtlSeconds: number;
  /** The rate limits by what they count (api/rate-limits.ts); null where a limit is off. */
  rateLimits: Record<RateLimitName, RateLimit | null>;
  /** Express `trust proxy`: which peers may name the client's address in X-Forwarded-For. */
  trustProxy: string | undefined;
  /** How long a request may take to arrive whole, headers and body (milliseconds). */
  requestTimeoutMs: number;
  /** How long a request's line and headers may take to arrive (milliseconds), at most requestTimeoutMs. */
  requestHeadersTimeoutMs: number;
  /** How long a connection may stay idle between two requests before the API closes it (milliseconds). */
  keepAliveTimeoutMs: number;
  /** Connections one API process holds open at most. */
  maxConnections: number;
  /**
   * Connections one API process holds open at most from one client address (an IPv6 /64 counts as
   * one), unless TRUST_PROXY trusts the peer (a reverse proxy speaks for many clients); 0: no limit.
   */
  maxConnectionsPerAddress: number;
  logLevel: string;
  /** How `npm start` shows the logs of the API and the worker (LOG_FORMAT); see chooseLogFormat. */
  logFormat: LogFormatSetting;
  /** How long a health probe may take before the dependency counts as down. */
  healthProbeTimeoutMs: number;
  /** How long the exchange's own cross-connects take on the lab fabric (milliseconds). */
  labCrossConnectDelayMs: number;
  /** How long a lab device takes to answer each driver call (milliseconds). */
  labDeviceLatencyMs: number;
  /** The worker's device driver, by name (`DEVICE_DRIVERS`, worker/create-worker.ts). */
  deviceDriver: DeviceDriverName;
  /** The run directory of the ovs fabric (`npm run fabric`), for the `ovs` driver. */
  ovsRunDir: string;
  /**
   * Seconds between two rounds of the fabric's supervisor (`superviseFabric`, DEVICE_DRIVER=ovs):
   * dead processes restarted, lost rules restored, devices brought in line with the database.
   */
  supervisionIntervalSeconds: number;
  /**
   * The RPKI validator caches the route servers' BIRDs fetch validated ROA payloads from over RTR
   * (RPKI_RTR); empty: no origin validation.
   */
  rpkiRtr: RtrCache[];
  /** How long a released IP address rests before it is allocated again (seconds; 0 for at once). */
  ipQuarantineSeconds: number;
  /** Seconds between two samples of the traffic counters of ports and connections. */
  statsSampleIntervalSeconds: number;
  /** How long delivered outbox messages are kept before they are deleted (seconds). */
  outboxRetentionSeconds: number;
  /** How long events are kept before they are deleted (seconds). */
  eventRetentionSeconds: number;
  /**
   * After SIGTERM, how long the API finishes requests under way and the worker its running
   * activities before they are cut off (seconds).
   */
  shutdownTimeoutSeconds: number;
  /**
   * What one account tree (a customer and every account it manages, directly or below) may hold at
   * once, by quota (domain/quotas.ts names them); 0 means no limit.
   */
  quotas: Record<QuotaVariableName, number>;
  /** Workflows a worker keeps cached between their tasks (WORKER_CACHED_WORKFLOWS); undefined: the SDK's choice. */
  workerCachedWorkflows: number | undefined;
  /**
   * The interface the metrics listeners (METRICS_PORT, TEMPORAL_METRICS_PORT) bind to: loopback
   * unless set, since they answer without authentication.
   */
  metricsHost: string;
  /** Port of the process's own Prometheus listener (`GET /metrics`); null when metrics are off. */
  metricsPort: number | null;
  /** Port of the Temporal SDK runtime's Prometheus exporter in the worker; null when it is off. */
  temporalMetricsPort: number | null;
  /**
   * The IX-F member export (`/ixf/member-export`): the `ixp_id` and the `ixf_id` of the IXP of an
   * exchange LAN, by the LAN's id, where they differ from the defaults (the LAN's `ixfdb_ixid`),
   * and how long clients and caches may keep the document (seconds).
   */
  ixfExport: { ixpIds: Record<string, number>; ixfIds: Record<string, number>; maxAgeSeconds: number };
}

/** The largest quota a setting takes; anything above it is a typo rather than a limit. */
const QUOTA_MAX = 1_000_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const env = resolveFileVariables(environment);
  const get = (name: string): string => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    const variable = CONFIG_VARIABLES.find((v) => v.name === name);
    return variable?.default ?? '';
  };
  const port = parseInteger('PORT', get('PORT'), 1, 65535);
  const logLevel = get('LOG_LEVEL');
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const publicBaseUrl = (env.PUBLIC_BASE_URL || `http://localhost:${port}/api/v2`).replace(/\/+$/, '');
  try {
    new URL(publicBaseUrl);
  } catch {
    throw new ConfigError('PUBLIC_BASE_URL', `is not a URL: "${publicBaseUrl}"`);
  }
  const accessTokenTtlSeconds = parseDuration('ACCESS_TOKEN_TTL', get('ACCESS_TOKEN_TTL'));
  const refreshTokenTtlSeconds = parseDuration('REFRESH_TOKEN_TTL', get('REFRESH_TOKEN_TTL'));
  if (refreshTokenTtlSeconds <= accessTokenTtlSeconds) {
    throw new ConfigError('REFRESH_TOKEN_TTL', 'must be longer than ACCESS_TOKEN_TTL');
  }
  const [tokenSigningKey, ...tokenVerificationKeys] = parseKeyList(
    'TOKEN_SIGNING_KEY',
    env.TOKEN_SIGNING_KEY,
  );
  const apiSecretHashKey = parseKey('API_SECRET_HASH_KEY', env.API_SECRET_HASH_KEY);
  if (
    [tokenSigningKey, ...tokenVerificationKeys].some((key) =>
      Buffer.from(key).equals(Buffer.from(apiSecretHashKey)),
    )
  ) {
    throw new ConfigError('API_SECRET_HASH_KEY', 'must differ from TOKEN_SIGNING_KEY');
  }
  const refreshFamilyTtlSeconds = parseDuration('REFRESH_FAMILY_TTL', get('REFRESH_FAMILY_TTL'));
  if (refreshFamilyTtlSeconds <= accessTokenTtlSeconds) {
    throw new ConfigError('REFRESH_FAMILY_TTL', 'must be longer than ACCESS_TOKEN_TTL');
  }
  const metricsPort = parseOptionalPort('METRICS_PORT', get('METRICS_PORT'));
  const temporalMetricsPort = parseOptionalPort('TEMPORAL_METRICS_PORT', get('TEMPORAL_METRICS_PORT'));
  for (const [variable, value] of [
    ['METRICS_PORT', metricsPort],
    ['TEMPORAL_METRICS_PORT', temporalMetricsPort],
  ] as const) {
    if (value !== null && value === port) throw new ConfigError(variable, 'must differ from PORT');
  }
  if (metricsPort !== null && metricsPort === temporalMetricsPort) {
    throw new ConfigError('TEMPORAL_METRICS_PORT', 'must differ from METRICS_PORT');
  }
  return {
    nodeEnv: get('NODE_ENV'),
    host: get('HOST'),
    port,
    apiProcesses: parseProcesses(get('API_PROCESSES'), get('NODE_ENV')),
    publicBaseUrl,
    databaseUrl: parseDatabaseUrl(get('DATABASE_URL')),
    databasePoolMax: parseInteger('DATABASE_POOL_MAX', get('DATABASE_POOL_MAX'), 1, 1000),
    temporalAddress: parseTemporalAddress(env.TEMPORAL_ADDRESS),
    temporalNamespace: parseName('TEMPORAL_NAMESPACE', get('TEMPORAL_NAMESPACE')),
    temporalTaskQueue: parseName('TEMPORAL_TASK_QUEUE', get('TEMPORAL_TASK_QUEUE')),
    tokenSigningKey,
    apiSecretHashKey,
    tokenVerificationKeys,
    accessTokenTtlSeconds,
    refreshTokenTtlSeconds,
    refreshFamilyTtlSeconds,
    rateLimits: Object.fromEntries(
      Object.entries(RATE_LIMIT_VARIABLES).map(([limit, name]) => [limit, parseRateLimit(name, get(name))]),
    ) as Config['rateLimits'],
    trustProxy: get('TRUST_PROXY').trim() || undefined,
    ...parseRequestTimes(env, get),
    keepAliveTimeoutMs: parseDuration('KEEP_ALIVE_TIMEOUT', get('KEEP_ALIVE_TIMEOUT')) * 1000,
    maxConnections: parseInteger('MAX_CONNECTIONS', get('MAX_CONNECTIONS'), 1, 1_000_000),
    maxConnectionsPerAddress: parseInteger(
      'MAX_CONNECTIONS_PER_ADDRESS',
      get('MAX_CONNECTIONS_PER_ADDRESS'),
      0,
      1_000_000,
    ),
    logLevel,
    logFormat: parseLogFormat(get('LOG_FORMAT')),
    healthProbeTimeoutMs: parseInteger('HEALTH_PROBE_TIMEOUT_MS', get('HEALTH_PROBE_TIMEOUT_MS'), 100, 60000),
    labCrossConnectDelayMs: parseInteger(
      'LAB_CROSS_CONNECT_DELAY_MS',
      get('LAB_CROSS_CONNECT_DELAY_MS'),
      0,
      86_400_000,
    ),
    labDeviceLatencyMs: parseInteger('LAB_DEVICE_LATENCY_MS', get('LAB_DEVICE_LATENCY_MS'), 0, 60_000),
    deviceDriver: parseDeviceDriver(get('DEVICE_DRIVER')),
    ovsRunDir: get('OVS_RUN_DIR').trim(),
    supervisionIntervalSeconds: parseInteger(
      'SUPERVISION_INTERVAL_S',
      get('SUPERVISION_INTERVAL_S'),
      1,
      86_400,
    ),
    rpkiRtr: parseRtrCaches('RPKI_RTR', get('RPKI_RTR')),
    ipQuarantineSeconds:
      get('IP_QUARANTINE').trim() === '0' ? 0 : parseDuration('IP_QUARANTINE', get('IP_QUARANTINE')),
    statsSampleIntervalSeconds: parseInteger(
      'STATS_SAMPLE_INTERVAL_S',
      get('STATS_SAMPLE_INTERVAL_S'),
      1,
      86_400,
    ),
    outboxRetentionSeconds: parseDuration('OUTBOX_RETENTION', get('OUTBOX_RETENTION')),
    eventRetentionSeconds: parseDuration('EVENT_RETENTION', get('EVENT_RETENTION')),
    shutdownTimeoutSeconds: parseDuration('SHUTDOWN_TIMEOUT', get('SHUTDOWN_TIMEOUT')),
    quotas: Object.fromEntries(
      Object.entries(QUOTA_VARIABLES).map(([quota, name]) => [
        quota,
        parseInteger(name, get(name), 0, QUOTA_MAX),
      ]),
    ) as Config['quotas'],
    workerCachedWorkflows:
      get('WORKER_CACHED_WORKFLOWS').trim() === 'auto'
        ? undefined
        : parseInteger('WORKER_CACHED_WORKFLOWS', get('WORKER_CACHED_WORKFLOWS'), 2, 100_000),
    metricsHost: get('METRICS_HOST').trim(),
    metricsPort,
    temporalMetricsPort,
    ixfExport: {
      ixpIds: parseIdsByLan('IXF_EXPORT_IXP_IDS', get('IXF_EXPORT_IXP_IDS')),
      ixfIds: parseIdsByLan('IXF_EXPORT_IXF_IDS', get('IXF_EXPORT_IXF_IDS')),
      maxAgeSeconds: parseDuration('IXF_EXPORT_MAX_AGE', get('IXF_EXPORT_MAX_AGE')),
    },
  };
}

/**
 * REQUEST_TIMEOUT and REQUEST_HEADERS_TIMEOUT (milliseconds). The headers arrive within the whole
 * request's time; left unset, they get 5 s or the whole request's time when that is shorter.
 */
function parseRequestTimes(
  env: NodeJS.ProcessEnv,
  get: (name: string) => string,
): Pick<Config, 'requestTimeoutMs' | 'requestHeadersTimeoutMs'> {
  const requestTimeoutMs = parseDuration('REQUEST_TIMEOUT', get('REQUEST_TIMEOUT')) * 1000;
  const headers = parseDuration('REQUEST_HEADERS_TIMEOUT', get('REQUEST_HEADERS_TIMEOUT')) * 1000;
  if (!env.REQUEST_HEADERS_TIMEOUT)
    return { requestTimeoutMs, requestHeadersTimeoutMs: Math.min(headers, requestTimeoutMs) };
  if (headers > requestTimeoutMs)
    throw new ConfigError('REQUEST_HEADERS_TIMEOUT', 'must be at most REQUEST_TIMEOUT');
  return { requestTimeoutMs, requestHeadersTimeoutMs: headers };
}

/** The most API processes one host runs; more is a typo rather than a plan. */
const MAX_API_PROCESSES = 256;

function parseProcesses(raw: string, nodeEnv: string): number {
  const value = raw.trim();
  if (value === 'auto') return nodeEnv === 'production' ? availableParallelism() : 1;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_API_PROCESSES)
    throw new ConfigError(
      'API_PROCESSES',
      `expected auto or a whole number from 1 to ${MAX_API_PROCESSES}, got "${raw}"`,
    );
  return Number(value);
}

/** The Temporal frontend to use: the configured one, or the local dev server the dev stack starts. */
export function temporalAddressOf(config: Config): string {
  return config.temporalAddress ?? '127.0.0.1:7233';
}

/** Loads the configuration in an entry point; a bad value ends the process with a message naming it. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}
