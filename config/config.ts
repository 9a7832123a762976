/**
 * Service configuration, read once from the environment and validated at start-up.
 * Every problem names the variable so that a bad deployment fails loudly and clearly.
 */

import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

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

/** So many requests per window of so many seconds. */
export interface RateLimit {
  points: number;
  durationSeconds: number;
}

/** The variable of each rate limit, by what the limit counts. */
const RATE_LIMIT_VARIABLES = {
  authPerAddress: 'RATE_LIMIT_AUTH_PER_ADDRESS',
  authFailuresPerAddress: 'RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS',
  authFailuresPerKey: 'RATE_LIMIT_AUTH_FAILURES_PER_KEY',
  perAccount: 'RATE_LIMIT_PER_ACCOUNT',
  perAddress: 'RATE_LIMIT_PER_ADDRESS',
} as const;
export type RateLimitName = keyof typeof RATE_LIMIT_VARIABLES;

/** A rate limit's variable, read by parseRateLimit. */
function rateLimitVariable(name: string, value: string, counts: string): ConfigVariable {
  return { name, default: value, description: `${counts} (requests/window such as 30/1m, or 0 for none)` };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

/** One documented environment variable; the table of docs/configuration.md is checked against this list. */
export interface ConfigVariable {
  name: string;
  default: string | undefined;
  description: string;
  /** A credential: deployments pass it as a file (NAME_FILE), and no message ever shows its value. */
  secret?: boolean;
}

export const CONFIG_VARIABLES: readonly ConfigVariable[] = [
  { name: 'NODE_ENV', default: 'development', description: 'production enables the strictest checks' },
  { name: 'HOST', default: '0.0.0.0', description: 'interface the API listens on' },
  { name: 'PORT', default: '8000', description: 'TCP port of the API' },
  {
    name: 'API_PROCESSES',
    default: 'auto',
    description:
      'API processes on one host, sharing PORT (a primary process starts them, restarts one that fails and serves their metrics together); auto: as many as the host has cores when NODE_ENV is production, else 1',
  },
  {
    name: 'PUBLIC_BASE_URL',
    default: 'http://localhost:<PORT>/api/v2',
    description: 'public URL of the API base path, used in links the API returns',
  },
  {
    name: 'DATABASE_URL',
    default: 'mysql://root@127.0.0.1:3306/ixapi',
    description:
      'MySQL/MariaDB connection URL; the database is created if missing; DATABASE_URL_FILE names a file holding it',
    secret: true,
  },
  { name: 'DATABASE_POOL_MAX', default: '10', description: 'maximum database connections per process' },
  {
    name: 'TEMPORAL_ADDRESS',
    default: undefined,
    description:
      'host:port of the Temporal frontend; when unset `npm start` runs a local dev server on 127.0.0.1:7233',
  },
  { name: 'TEMPORAL_NAMESPACE', default: 'ixapi', description: 'Temporal namespace of the workflows' },
  { name: 'TEMPORAL_TASK_QUEUE', default: 'ixapi-provisioning', description: 'task queue the worker polls' },
  {
    name: 'TOKEN_SIGNING_KEY',
    default: undefined,
    description:
      'secret (at least 32 bytes, base64 or hex) signing the JWTs; during a rotation the new key first, then the previous ones (comma or line separated), which only verify; `npm start` generates one in .data/; TOKEN_SIGNING_KEY_FILE names a file holding it',
    secret: true,
  },
  {
    name: 'API_SECRET_HASH_KEY',
    default: undefined,
    description:
      'secret (at least 32 bytes, base64 or hex) keying the stored hashes of API secrets; API_SECRET_HASH_KEY_FILE names a file holding it',
    secret: true,
  },
  { name: 'ACCESS_TOKEN_TTL', default: '1h', description: 'access token lifetime (seconds, or 30m, 1h, 2d)' },
  {
    name: 'REFRESH_TOKEN_TTL',
    default: '30d',
    description: 'refresh token lifetime (seconds, or 30m, 1h, 2d)',
  },
  {
    name: 'REFRESH_FAMILY_TTL',
    default: '30d',
    description:
      'how long a login lasts however often it is refreshed; then the key and secret are needed again',
  },
  rateLimitVariable('RATE_LIMIT_AUTH_PER_ADDRESS', '600/1m', 'token and refresh requests per client address'),
  rateLimitVariable('RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS', '30/1m', 'failed logins per client address'),
  rateLimitVariable('RATE_LIMIT_AUTH_FAILURES_PER_KEY', '10/1m', 'failed logins per key and client address'),
  rateLimitVariable('RATE_LIMIT_PER_ACCOUNT', '1200/1m', 'requests with an access token per account'),
  rateLimitVariable('RATE_LIMIT_PER_ADDRESS', '600/1m', 'requests without a valid token per client address'),
  {
    name: 'TRUST_PROXY',
    default: '',
    description:
      'peers trusted to name the client address in X-Forwarded-For (Express trust proxy: loopback, uniquelocal, addresses, subnets, or a hop count)',
  },
  {
    name: 'REQUEST_TIMEOUT',
    default: '30s',
    description:
      'time a request may take to arrive whole, headers and body; one still arriving then is answered 408 and its connection closed',
  },
  {
    name: 'REQUEST_HEADERS_TIMEOUT',
    default: '5s',
    description:
      "time a request's line and headers may take to arrive, at most REQUEST_TIMEOUT (unset: 5 s, or REQUEST_TIMEOUT when shorter)",
  },
  {
    name: 'KEEP_ALIVE_TIMEOUT',
    default: '5s',
    description:
      "time a connection may stay idle between two requests before the API closes it; behind a load balancer that keeps idle connections longer, set it above the balancer's idle timeout",
  },
  { name: 'MAX_CONNECTIONS', default: '1024', description: 'connections one API process holds open at most' },
  {
    name: 'MAX_CONNECTIONS_PER_ADDRESS',
    default: '64',
    description:
      'connections one API process holds open at most from one client address (an IPv6 /64 counts as one); not counted for peers TRUST_PROXY trusts, whose connections carry many clients (0: no limit)',
  },
  {
    name: 'LOG_LEVEL',
    default: 'info',
    description: 'pino log level: fatal, error, warn, info, debug, trace, silent',
  },
  {
    name: 'LOG_FORMAT',
    default: 'auto',
    description:
      "how `npm start` shows the API's and the worker's logs: json (one JSON object a line, as the processes write them), pretty (pino-pretty's readable lines) or auto (pretty on a terminal unless NODE_ENV is production, else json)",
  },
  { name: 'HEALTH_PROBE_TIMEOUT_MS', default: '2000', description: 'time a health probe may take' },
  {
    name: 'LAB_CROSS_CONNECT_DELAY_MS',
    default: '2000',
    description: "time the exchange's own cross-connects take on the lab fabric before testing starts",
  },
  {
    name: 'LAB_DEVICE_LATENCY_MS',
    default: '0',
    description: 'time a lab device takes to answer each configuration, optics or counter call',
  },
  {
    name: 'DEVICE_DRIVER',
    default: 'lab',
    description:
      "the worker's device driver: lab (a fabric simulated in the database) or ovs (Open vSwitch bridges that `npm run fabric -- up` starts; needs root)",
  },
  {
    name: 'OVS_RUN_DIR',
    default: '.data/ovs',
    description:
      "run directory of the ovs fabric (DEVICE_DRIVER=ovs): ovsdb-server's database and socket, the bridges' OpenFlow sockets, pids and logs",
  },
  {
    name: 'SUPERVISION_INTERVAL_S',
    default: '30',
    description:
      'seconds between two rounds of the fabric supervisor (DEVICE_DRIVER=ovs): dead OVS or BIRD processes restarted, lost OpenFlow rules restored, devices brought in line with the database',
  },
  {
    name: 'STATS_SAMPLE_INTERVAL_S',
    default: '300',
    description: 'seconds between two samples of the traffic counters of ports and connections',
  },
  {
    name: 'IP_QUARANTINE',
    default: '30d',
    description:
      'how long a released IP address rests before it is allocated again (0, seconds, or 30m, 1h, 2d)',
  },
  {
    name: 'OUTBOX_RETENTION',
    default: '7d',
    description: 'how long delivered workflow messages stay in the outbox table before they are deleted',
  },
  {
    name: 'EVENT_RETENTION',
    default: '365d',
    description: 'how long events stay readable at GET /events before they are deleted',
  },
  {
    name: 'SHUTDOWN_TIMEOUT',
    default: '30s',
    description:
      'after SIGTERM, how long the API finishes requests under way and the worker its running activities',
  },
  {
    name: 'QUOTA_PORTS',
    default: '200',
    description:
      'ports one account tree (a customer and the accounts it manages) may hold at once, of connections and port reservations that have not ended (0: no limit)',
  },
  {
    name: 'QUOTA_SUB_ACCOUNTS',
    default: '500',
    description: 'accounts one account tree may hold below its top account, directly or deeper (0: no limit)',
  },
  {
    name: 'QUOTA_OPEN_ORDERS',
    default: '200',
    description:
      'orders of one account tree that may be open at once: connections, port reservations, network services and their configs ordered and not yet in production nor ended (0: no limit)',
  },
  {
    name: 'QUOTA_CONTACTS',
    default: '5000',
    description: 'contacts one account tree may hold at once; deleting one makes room (0: no limit)',
  },
  {
    name: 'QUOTA_MACS',
    default: '5000',
    description:
      'MAC address registrations one account tree may hold at once; deleting one makes room (0: no limit)',
  },
  {
    name: 'QUOTA_IPS',
    default: '1000',
    description:
      'IP addresses one account tree may register itself (POST /ips); addresses the exchange allocates do not count, and since IX-API deletes no IP address, a registration is changed rather than deleted to make room (0: no limit)',
  },
  {
    name: 'QUOTA_MEMBER_JOINING_RULES',
    default: '2000',
    description:
      'member joining rules one account tree may manage at once; deleting one makes room (0: no limit)',
  },
  {
    name: 'WORKER_CACHED_WORKFLOWS',
    default: 'auto',
    description:
      "workflows a worker keeps in memory between their tasks (Temporal's sticky cache); one evicted replays its history at its next task, so fewer cost CPU and more cost memory; auto: the Temporal SDK's choice from the heap limit (about 2,300 with Node's default heap on a large host)",
  },
  {
    name: 'IXF_EXPORT_IXP_IDS',
    default: '',
    description:
      'the ixp_id of the IXP of an exchange LAN in the IX-F member export, as LAN id=number pairs separated by commas (ns-exchange-lan-fra=1,ns-exchange-lan-ams=2); a LAN not named: its IX-F id',
  },
  {
    name: 'IXF_EXPORT_IXF_IDS',
    default: '',
    description:
      "the ixf_id (IX-F database id) of an exchange LAN's IXP in the IX-F member export, as LAN id=number pairs; a LAN not named: its ixfdb_ixid; a LAN with neither is left out of the export",
  },
  {
    name: 'IXF_EXPORT_MAX_AGE',
    default: '60s',
    description:
      'how long clients and caches may keep the IX-F member export (Cache-Control max-age; seconds, or 5m, 1h)',
  },
  {
    name: 'METRICS_HOST',
    default: '127.0.0.1',
    description:
      'interface the metrics listeners bind to; they answer without authentication, so loopback unless a scraper elsewhere needs them (0.0.0.0 in containers)',
  },
  {
    name: 'METRICS_PORT',
    default: '',
    description:
      "TCP port (on METRICS_HOST) of the process's own listener serving Prometheus metrics at GET /metrics, apart from the API; unset: no metrics listener",
  },
  {
    name: 'TEMPORAL_METRICS_PORT',
    default: '',
    description:
      "TCP port (on METRICS_HOST) where the worker's Temporal SDK runtime serves its own Prometheus metrics; unset: none",
  },
];

/** The largest quota a setting takes; anything above it is a typo rather than a limit. */
const QUOTA_MAX = 1_000_000;

/** The variable of each quota, by the quota's name in domain/quotas.ts. */
const QUOTA_VARIABLES = {
  ports: 'QUOTA_PORTS',
  sub_accounts: 'QUOTA_SUB_ACCOUNTS',
  open_orders: 'QUOTA_OPEN_ORDERS',
  contacts: 'QUOTA_CONTACTS',
  macs: 'QUOTA_MACS',
  ips: 'QUOTA_IPS',
  member_joining_rules: 'QUOTA_MEMBER_JOINING_RULES',
} as const;
export type QuotaVariableName = keyof typeof QUOTA_VARIABLES;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** The log formats a person can ask for; `auto` leaves the choice to chooseLogFormat. */
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormatSetting = (typeof LOG_FORMATS)[number];
export type LogFormat = Exclude<LogFormatSetting, 'auto'>;

/**
 * The format log lines are shown in: LOG_FORMAT when it names one; otherwise pretty only for a
 * person at a terminal outside production. Production, pipes, log collectors and tests (no TTY)
 * get JSON, one object a line.
 */
export function chooseLogFormat(
  config: Pick<Config, 'logFormat' | 'nodeEnv'>,
  output: { isTTY?: boolean },
): LogFormat {
  if (config.logFormat !== 'auto') return config.logFormat;
  return output.isTTY === true && config.nodeEnv !== 'production' ? 'pretty' : 'json';
}

function parseLogFormat(raw: string): LogFormatSetting {
  const format = LOG_FORMATS.find((candidate) => candidate === raw);
  if (!format) throw new ConfigError('LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}, got "${raw}"`);
  return format;
}

/** The device drivers a worker can run (worker/create-worker.ts builds them). */
export const DEVICE_DRIVER_NAMES = ['lab', 'ovs'] as const;
export type DeviceDriverName = (typeof DEVICE_DRIVER_NAMES)[number];

function parseDeviceDriver(raw: string): DeviceDriverName {
  const name = raw.trim();
  const known = DEVICE_DRIVER_NAMES.find((candidate) => candidate === name);
  if (!known)
    throw new ConfigError('DEVICE_DRIVER', `must be one of ${DEVICE_DRIVER_NAMES.join(', ')}, got "${raw}"`);
  return known;
}
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

export function parseDuration(variable: string, raw: string): number {
  const match = /^(\d+)\s*([smhd]?)$/.exec(raw.trim());
  if (!match)
    throw new ConfigError(variable, `expected a duration such as 3600, 90m, 1h or 30d, got "${raw}"`);
  const seconds = Number(match[1]) * DURATION_UNITS[match[2] || 's'];
  if (seconds < 1) throw new ConfigError(variable, 'must be at least one second');
  return seconds;
}

/** `30/1m` (30 requests a minute), `1200/3600`; `0` turns the limit off. */
export function parseRateLimit(variable: string, raw: string): RateLimit | null {
  if (raw.trim() === '0') return null;
  const match = /^(\d+)\s*\/\s*(\S+)$/.exec(raw.trim());
  if (!match) throw new ConfigError(variable, `expected requests/window such as 30/1m, or 0, got "${raw}"`);
  const points = Number(match[1]);
  if (points < 1 || points > 1_000_000)
    throw new ConfigError(variable, 'requests must be between 1 and 1000000');
  return { points, durationSeconds: parseDuration(variable, match[2]) };
}

/** One key or more, separated by commas or line breaks, each as parseKey takes it. */
export function parseKeyList(variable: string, raw: string | undefined): Uint8Array[] {
  const parts = (raw ?? '').split(/[,\n]/).filter((part) => part.trim() !== '');
  if (!parts.length) return [parseKey(variable, raw)];
  return parts.map((part) => parseKey(variable, part));
}

function parseInteger(variable: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(variable, `expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(variable, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** Accepts a key as hex (64+ hex digits) or base64/base64url; rejects anything shorter than 32 bytes. */
export function parseKey(variable: string, raw: string | undefined): Uint8Array {
  if (raw === undefined || raw.trim() === '') {
    throw new ConfigError(variable, 'is required (at least 32 random bytes, base64 or hex encoded)');
  }
  const text = raw.trim();
  let bytes: Buffer;
  if (/^[0-9a-fA-F]+$/.test(text) && text.length % 2 === 0) bytes = Buffer.from(text, 'hex');
  else if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) bytes = Buffer.from(text, 'base64');
  else throw new ConfigError(variable, 'must be hex or base64 encoded');
  if (bytes.length < 32) throw new ConfigError(variable, `must hold at least 32 bytes, got ${bytes.length}`);
  return new Uint8Array(bytes);
}

function parseDatabaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // The URL carries the database password: never repeat it.
    throw new ConfigError('DATABASE_URL', 'is not a URL');
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') {
    throw new ConfigError('DATABASE_URL', `must start with mysql:// or mariadb://, got "${url.protocol}//"`);
  }
  if (url.pathname.replace(/^\//, '') === '') throw new ConfigError('DATABASE_URL', 'must name a database');
  return raw;
}

function parseTemporalAddress(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^[A-Za-z0-9.-]+:\d{1,5}$/.test(raw.trim())) {
    throw new ConfigError('TEMPORAL_ADDRESS', `expected host:port, got "${raw}"`);
  }
  return raw.trim();
}

/** A port of its own for an optional listener; unset or empty turns it off. */
function parseOptionalPort(variable: string, raw: string): number | null {
  if (raw.trim() === '') return null;
  return parseInteger(variable, raw, 1, 65535);
}

/** The largest id the IX-F member export takes: the schema's integers, as 32-bit databases keep them. */
const IXF_ID_MAX = 2_147_483_647;

/** `ns-exchange-lan-fra=1, ns-exchange-lan-ams=2`: a number per exchange LAN id, each LAN once. */
export function parseIdsByLan(variable: string, raw: string): Record<string, number> {
  const ids: Record<string, number> = {};
  for (const pair of raw.split(/[,\s]+/).filter((part) => part !== '')) {
    const match = /^([A-Za-z0-9:_-]{1,80})=(\d{1,10})$/.exec(pair);
    if (!match)
      throw new ConfigError(
        variable,
        `expected exchange-LAN-id=number pairs separated by commas, got "${pair}"`,
      );
    const [, lan, number] = match;
    if (Object.hasOwn(ids, lan)) throw new ConfigError(variable, `names ${lan} twice`);
    ids[lan] = parseInteger(variable, number, 0, IXF_ID_MAX);
  }
  return ids;
}

function parseName(variable: string, raw: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/.test(raw)) {
    throw new ConfigError(variable, `must be letters, digits, ".", "_" or "-", got "${raw}"`);
  }
  return raw;
}

/** Suffix of the variable naming a file that holds a variable's value (NAME_FILE for NAME). */
export const FILE_SUFFIX = '_FILE';

/**
 * The environment with every NAME_FILE of a configuration variable replaced by NAME, its value read
 * from that file (trailing whitespace and newlines removed), the way Docker and Kubernetes mount
 * secrets. NAME and NAME_FILE together, or a file that cannot be read or is empty, is an error;
 * messages name the variables and the path, never the content.
 */
export function resolveFileVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const resolved: NodeJS.ProcessEnv = { ...env };
  for (const { name } of CONFIG_VARIABLES) {
    const fileVariable = `${name}${FILE_SUFFIX}`;
    const file = env[fileVariable];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      throw new ConfigError(
        name,
        `is set together with ${fileVariable}; set only one of ${name} and ${fileVariable}`,
      );
    }
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(fileVariable, `cannot read the file "${file}" (${code})`);
    }
    const value = content.trimEnd();
    if (value === '') throw new ConfigError(fileVariable, `the file "${file}" is empty`);
    resolved[name] = value;
    delete resolved[fileVariable];
  }
  return resolved;
}

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
