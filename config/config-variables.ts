/**
 * The environment variables of the configuration, with their defaults and what they set: the list
 * loadConfig reads and docs/configuration.md documents.
 */

/** The variable of each rate limit, by what the limit counts. */
export const RATE_LIMIT_VARIABLES = {
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
    name: 'RPKI_RTR',
    default: '',
    description:
      "RPKI validator caches the route servers' BIRDs validate origins against over RTR (RFC 8210): host:port, comma separated ([2001:db8::5]:3323 for IPv6); empty: no RPKI",
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

/** The variable of each quota, by the quota's name in domain/quotas.ts. */
export const QUOTA_VARIABLES = {
  ports: 'QUOTA_PORTS',
  sub_accounts: 'QUOTA_SUB_ACCOUNTS',
  open_orders: 'QUOTA_OPEN_ORDERS',
  contacts: 'QUOTA_CONTACTS',
  macs: 'QUOTA_MACS',
  ips: 'QUOTA_IPS',
  member_joining_rules: 'QUOTA_MEMBER_JOINING_RULES',
} as const;
export type QuotaVariableName = keyof typeof QUOTA_VARIABLES;
