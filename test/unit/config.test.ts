import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import {
  CONFIG_VARIABLES,
  ConfigError,
  chooseLogFormat,
  loadConfig,
  parseDuration,
} from '../../config/config';
import { QUOTA_SETTINGS } from '../../domain/quotas';

const keys = {
  TOKEN_SIGNING_KEY: Buffer.alloc(32, 1).toString('base64'),
  API_SECRET_HASH_KEY: Buffer.alloc(32, 2).toString('hex'),
};

function failsOn(variable: string, env: NodeJS.ProcessEnv): void {
  assert.throws(
    () => loadConfig({ ...keys, ...env }),
    (error: unknown) =>
      error instanceof ConfigError && error.variable === variable && error.message.startsWith(variable),
  );
}

describe('configuration', () => {
  it('shows logs pretty only to a person at a terminal outside production, unless LOG_FORMAT says', () => {
    const format = (env: NodeJS.ProcessEnv, isTTY: boolean) =>
      chooseLogFormat(loadConfig({ ...keys, ...env }), { isTTY });
    assert.equal(loadConfig(keys).logFormat, 'auto');
    assert.equal(format({}, true), 'pretty');
    assert.equal(format({ NODE_ENV: 'test' }, true), 'pretty');
    // Tests, pipes and log collectors read JSON: no terminal, no pretty lines.
    assert.equal(format({}, false), 'json');
    assert.equal(format({ NODE_ENV: 'test' }, false), 'json');
    assert.equal(format({ LOG_FORMAT: 'json' }, true), 'json');
    assert.equal(format({ LOG_FORMAT: 'pretty' }, false), 'pretty');
    assert.equal(chooseLogFormat({ logFormat: 'auto', nodeEnv: 'production' }, { isTTY: true }), 'json');
  });

  it('has sensible defaults for everything but the keys', () => {
    const config = loadConfig(keys);
    assert.equal(config.port, 8000);
    assert.equal(config.databaseUrl, 'mysql://root@127.0.0.1:3306/ixapi');
    assert.equal(config.temporalAddress, undefined);
    assert.equal(config.temporalNamespace, 'ixapi');
    assert.equal(config.accessTokenTtlSeconds, 3600);
    assert.equal(config.refreshTokenTtlSeconds, 30 * 86400);
    assert.equal(config.publicBaseUrl, 'http://localhost:8000/api/v2');
    assert.equal(config.logLevel, 'info');
    assert.equal(config.statsSampleIntervalSeconds, 300);
    assert.equal(config.supervisionIntervalSeconds, 30);
    assert.equal(config.refreshFamilyTtlSeconds, 30 * 86400);
    // Logins are refused for their failures; correct ones only past hundreds a minute.
    assert.deepEqual(config.rateLimits, {
      authPerAddress: { points: 600, durationSeconds: 60 },
      authFailuresPerAddress: { points: 30, durationSeconds: 60 },
      authFailuresPerKey: { points: 10, durationSeconds: 60 },
      perAccount: { points: 1200, durationSeconds: 60 },
      perAddress: { points: 600, durationSeconds: 60 },
    });
    assert.equal(config.trustProxy, undefined);
    assert.equal(config.requestTimeoutMs, 30_000);
    assert.equal(config.requestHeadersTimeoutMs, 5_000);
    assert.equal(config.keepAliveTimeoutMs, 5_000);
    assert.equal(config.maxConnections, 1024);
    assert.equal(config.maxConnectionsPerAddress, 64);
    assert.deepEqual(config.tokenVerificationKeys, []);
    assert.deepEqual(config.quotas, {
      ports: 200,
      sub_accounts: 500,
      open_orders: 200,
      contacts: 5000,
      macs: 5000,
      ips: 1000,
      member_joining_rules: 2000,
    });
  });

  it('takes the previous token signing keys after the current one, which alone signs', () => {
    const previous = Buffer.alloc(32, 9).toString('hex');
    const older = Buffer.alloc(32, 8).toString('base64');
    const config = loadConfig({
      ...keys,
      TOKEN_SIGNING_KEY: `${keys.TOKEN_SIGNING_KEY},${previous}\n${older}`,
    });
    assert.deepEqual(config.tokenSigningKey, new Uint8Array(Buffer.alloc(32, 1)));
    assert.deepEqual(config.tokenVerificationKeys, [
      new Uint8Array(Buffer.alloc(32, 9)),
      new Uint8Array(Buffer.alloc(32, 8)),
    ]);
    failsOn('TOKEN_SIGNING_KEY', { TOKEN_SIGNING_KEY: `${keys.TOKEN_SIGNING_KEY},short` });
    failsOn('API_SECRET_HASH_KEY', {
      TOKEN_SIGNING_KEY: `${keys.TOKEN_SIGNING_KEY},${keys.API_SECRET_HASH_KEY}`,
    });
  });

  it('reads rate limits as requests per window, and 0 as none', () => {
    const config = loadConfig({
      ...keys,
      RATE_LIMIT_AUTH_PER_ADDRESS: '5/30s',
      RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '3/5m',
      RATE_LIMIT_AUTH_FAILURES_PER_KEY: '0',
      RATE_LIMIT_PER_ACCOUNT: '10000/1h',
      RATE_LIMIT_PER_ADDRESS: '100 / 90',
      TRUST_PROXY: 'loopback, uniquelocal',
      REQUEST_TIMEOUT: '2m',
      MAX_CONNECTIONS: '64',
      REFRESH_FAMILY_TTL: '7d',
    });
    assert.deepEqual(config.rateLimits, {
      authPerAddress: { points: 5, durationSeconds: 30 },
      authFailuresPerAddress: { points: 3, durationSeconds: 300 },
      authFailuresPerKey: null,
      perAccount: { points: 10000, durationSeconds: 3600 },
      perAddress: { points: 100, durationSeconds: 90 },
    });
    assert.equal(config.trustProxy, 'loopback, uniquelocal');
    assert.equal(config.requestTimeoutMs, 120_000);
    assert.equal(config.maxConnections, 64);
    assert.equal(config.refreshFamilyTtlSeconds, 7 * 86400);
    failsOn('RATE_LIMIT_PER_ACCOUNT', { RATE_LIMIT_PER_ACCOUNT: '100' });
    failsOn('RATE_LIMIT_PER_ACCOUNT', { RATE_LIMIT_PER_ACCOUNT: '0/1m' });
    failsOn('RATE_LIMIT_AUTH_FAILURES_PER_KEY', { RATE_LIMIT_AUTH_FAILURES_PER_KEY: '10/forever' });
    failsOn('RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS', { RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '-1/1m' });
    failsOn('MAX_CONNECTIONS', { MAX_CONNECTIONS: '0' });
    failsOn('REFRESH_FAMILY_TTL', { REFRESH_FAMILY_TTL: '30m' });
  });

  it('bounds the time a request takes to arrive, its headers within it, and the connections of an address', () => {
    const config = loadConfig({
      ...keys,
      REQUEST_TIMEOUT: '20s',
      REQUEST_HEADERS_TIMEOUT: '2s',
      KEEP_ALIVE_TIMEOUT: '65s',
      MAX_CONNECTIONS_PER_ADDRESS: '0',
    });
    assert.equal(config.requestTimeoutMs, 20_000);
    assert.equal(config.requestHeadersTimeoutMs, 2_000);
    assert.equal(config.keepAliveTimeoutMs, 65_000);
    assert.equal(config.maxConnectionsPerAddress, 0);
    // Left unset, the headers' time is never longer than the whole request's.
    assert.equal(loadConfig({ ...keys, REQUEST_TIMEOUT: '3s' }).requestHeadersTimeoutMs, 3_000);
    failsOn('REQUEST_HEADERS_TIMEOUT', { REQUEST_TIMEOUT: '3s', REQUEST_HEADERS_TIMEOUT: '4s' });
    failsOn('REQUEST_HEADERS_TIMEOUT', { REQUEST_HEADERS_TIMEOUT: '0' });
    failsOn('KEEP_ALIVE_TIMEOUT', { KEEP_ALIVE_TIMEOUT: 'long' });
    failsOn('MAX_CONNECTIONS_PER_ADDRESS', { MAX_CONNECTIONS_PER_ADDRESS: '-1' });
  });

  it('reads each quota of domain/quotas.ts from the setting its refusals name', () => {
    const names = Object.keys(QUOTA_SETTINGS) as Array<keyof typeof QUOTA_SETTINGS>;
    const config = loadConfig({
      ...keys,
      ...Object.fromEntries(names.map((name, i) => [QUOTA_SETTINGS[name], String(i + 1)])),
    });
    assert.deepEqual(config.quotas, Object.fromEntries(names.map((name, i) => [name, i + 1])));
    for (const name of names) failsOn(QUOTA_SETTINGS[name], { [QUOTA_SETTINGS[name]]: 'many' });
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      ...keys,
      PORT: '9000',
      HOST: '127.0.0.1',
      DATABASE_URL: 'mysql://app:pw@db.example:3307/ix',
      TEMPORAL_ADDRESS: 'temporal.example:7233',
      TEMPORAL_NAMESPACE: 'prod',
      ACCESS_TOKEN_TTL: '2h',
      REFRESH_TOKEN_TTL: '7d',
      LOG_LEVEL: 'debug',
      PUBLIC_BASE_URL: 'https://ixapi.example/api/v2/',
      STATS_SAMPLE_INTERVAL_S: '60',
      SUPERVISION_INTERVAL_S: '10',
      QUOTA_PORTS: '0',
      QUOTA_SUB_ACCOUNTS: '25',
      QUOTA_OPEN_ORDERS: '1000',
    });
    assert.equal(config.port, 9000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.temporalAddress, 'temporal.example:7233');
    assert.equal(config.accessTokenTtlSeconds, 7200);
    assert.equal(config.refreshTokenTtlSeconds, 7 * 86400);
    assert.equal(config.publicBaseUrl, 'https://ixapi.example/api/v2');
    assert.equal(config.statsSampleIntervalSeconds, 60);
    assert.equal(config.supervisionIntervalSeconds, 10);
    assert.deepEqual(config.quotas, {
      ports: 0,
      sub_accounts: 25,
      open_orders: 1000,
      contacts: 5000,
      macs: 5000,
      ips: 1000,
      member_joining_rules: 2000,
    });
  });

  it('names the variable of every bad value', () => {
    failsOn('PORT', { PORT: '80a' });
    failsOn('PORT', { PORT: '70000' });
    failsOn('DATABASE_URL', { DATABASE_URL: 'postgres://localhost/ix' });
    failsOn('DATABASE_URL', { DATABASE_URL: 'mysql://localhost' });
    failsOn('DATABASE_URL', { DATABASE_URL: 'not a url' });
    failsOn('TEMPORAL_ADDRESS', { TEMPORAL_ADDRESS: 'temporal' });
    failsOn('TEMPORAL_NAMESPACE', { TEMPORAL_NAMESPACE: 'bad namespace' });
    failsOn('ACCESS_TOKEN_TTL', { ACCESS_TOKEN_TTL: 'forever' });
    failsOn('REFRESH_TOKEN_TTL', { ACCESS_TOKEN_TTL: '2d', REFRESH_TOKEN_TTL: '1d' });
    failsOn('LOG_LEVEL', { LOG_LEVEL: 'loud' });
    failsOn('LOG_FORMAT', { LOG_FORMAT: 'colourful' });
    failsOn('PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'nowhere' });
    failsOn('HEALTH_PROBE_TIMEOUT_MS', { HEALTH_PROBE_TIMEOUT_MS: '5' });
    failsOn('STATS_SAMPLE_INTERVAL_S', { STATS_SAMPLE_INTERVAL_S: '0' });
    failsOn('STATS_SAMPLE_INTERVAL_S', { STATS_SAMPLE_INTERVAL_S: '5m' });
    failsOn('SUPERVISION_INTERVAL_S', { SUPERVISION_INTERVAL_S: '0' });
    failsOn('TOKEN_SIGNING_KEY', { TOKEN_SIGNING_KEY: '' });
    failsOn('TOKEN_SIGNING_KEY', { TOKEN_SIGNING_KEY: Buffer.alloc(16).toString('base64') });
    failsOn('API_SECRET_HASH_KEY', { API_SECRET_HASH_KEY: keys.TOKEN_SIGNING_KEY });
    failsOn('QUOTA_PORTS', { QUOTA_PORTS: '-1' });
    failsOn('QUOTA_PORTS', { QUOTA_PORTS: 'many' });
    failsOn('QUOTA_SUB_ACCOUNTS', { QUOTA_SUB_ACCOUNTS: '2.5' });
    failsOn('QUOTA_OPEN_ORDERS', { QUOTA_OPEN_ORDERS: '10000000' });
  });

  it('parses durations in seconds, minutes, hours and days', () => {
    assert.equal(parseDuration('X', '90'), 90);
    assert.equal(parseDuration('X', '90s'), 90);
    assert.equal(parseDuration('X', '30m'), 1800);
    assert.equal(parseDuration('X', '1h'), 3600);
    assert.equal(parseDuration('X', '2d'), 172800);
    assert.throws(() => parseDuration('X', '0'), ConfigError);
    assert.throws(() => parseDuration('X', '1w'), ConfigError);
  });

  it('serves metrics on loopback unless told otherwise: the listeners ask for no credentials', () => {
    assert.equal(loadConfig(keys).metricsHost, '127.0.0.1');
    assert.equal(loadConfig({ ...keys, HOST: '0.0.0.0' }).metricsHost, '127.0.0.1');
    assert.equal(loadConfig({ ...keys, METRICS_HOST: '0.0.0.0' }).metricsHost, '0.0.0.0');
  });

  it('serves metrics only on a port of their own, when one is set', () => {
    assert.equal(loadConfig(keys).metricsPort, null);
    assert.equal(loadConfig(keys).temporalMetricsPort, null);
    const config = loadConfig({ ...keys, METRICS_PORT: '9464', TEMPORAL_METRICS_PORT: '9465' });
    assert.equal(config.metricsPort, 9464);
    assert.equal(config.temporalMetricsPort, 9465);
    failsOn('METRICS_PORT', { METRICS_PORT: 'ninety' });
    failsOn('METRICS_PORT', { METRICS_PORT: '0' });
    failsOn('METRICS_PORT', { METRICS_PORT: '8000' });
    failsOn('TEMPORAL_METRICS_PORT', { PORT: '9000', TEMPORAL_METRICS_PORT: '9000' });
    failsOn('TEMPORAL_METRICS_PORT', { METRICS_PORT: '9464', TEMPORAL_METRICS_PORT: '9464' });
  });

  it('runs one API process, or one per core in production, unless told how many', () => {
    assert.equal(loadConfig(keys).apiProcesses, 1);
    assert.equal(loadConfig({ ...keys, NODE_ENV: 'production' }).apiProcesses, availableParallelism());
    assert.equal(loadConfig({ ...keys, NODE_ENV: 'production', API_PROCESSES: '1' }).apiProcesses, 1);
    assert.equal(loadConfig({ ...keys, API_PROCESSES: '3' }).apiProcesses, 3);
    failsOn('API_PROCESSES', { API_PROCESSES: '0' });
    failsOn('API_PROCESSES', { API_PROCESSES: 'many' });
    failsOn('API_PROCESSES', { API_PROCESSES: '257' });
  });

  it("takes the size of the worker's workflow cache, or leaves it to the SDK", () => {
    assert.equal(loadConfig(keys).workerCachedWorkflows, undefined);
    assert.equal(loadConfig({ ...keys, WORKER_CACHED_WORKFLOWS: '1000' }).workerCachedWorkflows, 1000);
    failsOn('WORKER_CACHED_WORKFLOWS', { WORKER_CACHED_WORKFLOWS: '1' });
    failsOn('WORKER_CACHED_WORKFLOWS', { WORKER_CACHED_WORKFLOWS: 'all' });
  });

  it('numbers the IXPs of the IX-F member export by exchange LAN, and says how long it may be kept', () => {
    assert.deepEqual(loadConfig(keys).ixfExport, { ixpIds: {}, ixfIds: {}, maxAgeSeconds: 60 });
    const config = loadConfig({
      ...keys,
      IXF_EXPORT_IXP_IDS: 'ns-exchange-lan-fra=1, ns-exchange-lan-ams=2',
      IXF_EXPORT_IXF_IDS: 'ns-exchange-lan-fra=2147483647',
      IXF_EXPORT_MAX_AGE: '5m',
    });
    assert.deepEqual(config.ixfExport, {
      ixpIds: { 'ns-exchange-lan-fra': 1, 'ns-exchange-lan-ams': 2 },
      ixfIds: { 'ns-exchange-lan-fra': 2_147_483_647 },
      maxAgeSeconds: 300,
    });
    failsOn('IXF_EXPORT_IXP_IDS', { IXF_EXPORT_IXP_IDS: 'ns-exchange-lan-fra' });
    failsOn('IXF_EXPORT_IXP_IDS', { IXF_EXPORT_IXP_IDS: 'ns-exchange-lan-fra=-1' });
    failsOn('IXF_EXPORT_IXP_IDS', { IXF_EXPORT_IXP_IDS: 'a=1,a=2' });
    failsOn('IXF_EXPORT_IXP_IDS', { IXF_EXPORT_IXP_IDS: 'constructor=1,constructor=2' });
    failsOn('IXF_EXPORT_IXF_IDS', { IXF_EXPORT_IXF_IDS: 'ns-exchange-lan-fra=2147483648' });
    failsOn('IXF_EXPORT_MAX_AGE', { IXF_EXPORT_MAX_AGE: 'soon' });
  });

  it('reads the RPKI validator caches of the route servers, none unless set', () => {
    assert.deepEqual(loadConfig(keys).rpkiRtr, []);
    assert.deepEqual(
      loadConfig({ ...keys, RPKI_RTR: ' 192.0.2.5:3323, [2001:db8::5]:323,rtr.example.net:8282 ' }).rpkiRtr,
      [
        { host: '192.0.2.5', port: 3323 },
        { host: '2001:db8::5', port: 323 },
        { host: 'rtr.example.net', port: 8282 },
      ],
    );
    for (const bad of [
      '192.0.2.5',
      '2001:db8::5:323',
      '192.0.2.5:0',
      'a b:1',
      '[192.0.2.5]:1',
      '1.2.3:9',
      'x:1,X:1',
    ])
      failsOn('RPKI_RTR', { RPKI_RTR: bad });
  });

  it('documents every variable it reads', () => {
    const names = CONFIG_VARIABLES.map((v) => v.name);
    assert.equal(new Set(names).size, names.length);
    for (const variable of CONFIG_VARIABLES) assert.ok(variable.description.length > 10, variable.name);
  });

  it('says of every secret that it may come from a file', () => {
    const secrets = CONFIG_VARIABLES.filter((variable) => variable.secret).map((variable) => variable.name);
    assert.deepEqual(secrets.sort(), ['API_SECRET_HASH_KEY', 'DATABASE_URL', 'TOKEN_SIGNING_KEY']);
    for (const variable of CONFIG_VARIABLES.filter((v) => v.secret)) {
      assert.ok(variable.description.includes(`${variable.name}_FILE`), variable.name);
    }
  });
});

describe('configuration from files (NAME_FILE)', () => {
  let dir = '';
  const fileWith = (name: string, content: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, content, { mode: 0o600 });
    return file;
  };
  /** The ConfigError loadConfig throws for env, which must name `variable` and never show `secret`. */
  function errorOf(env: NodeJS.ProcessEnv, variable: string, secret?: string): ConfigError {
    try {
      loadConfig(env);
    } catch (error) {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      assert.equal(error.variable, variable);
      assert.ok(error.message.startsWith(`${variable}:`), error.message);
      if (secret !== undefined) assert.ok(!error.message.includes(secret), 'the message shows the secret');
      return error;
    }
    assert.fail('loadConfig accepted the environment');
  }

  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'ixapi-config-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads the value of every secret from the file NAME_FILE names', () => {
    const config = loadConfig({
      TOKEN_SIGNING_KEY_FILE: fileWith('token_signing_key', keys.TOKEN_SIGNING_KEY),
      API_SECRET_HASH_KEY_FILE: fileWith('api_secret_hash_key', keys.API_SECRET_HASH_KEY),
      DATABASE_URL_FILE: fileWith('database_url', 'mysql://ixapi:s3cret@db:3306/ixapi'),
    });
    assert.deepEqual(config.tokenSigningKey, new Uint8Array(Buffer.from(keys.TOKEN_SIGNING_KEY, 'base64')));
    assert.deepEqual(config.apiSecretHashKey, new Uint8Array(Buffer.from(keys.API_SECRET_HASH_KEY, 'hex')));
    assert.equal(config.databaseUrl, 'mysql://ixapi:s3cret@db:3306/ixapi');
  });

  it('reads any configuration variable from a file, not only the secrets', () => {
    const config = loadConfig({ ...keys, TEMPORAL_NAMESPACE_FILE: fileWith('namespace', 'prod\n') });
    assert.equal(config.temporalNamespace, 'prod');
  });

  it('drops the trailing newline and whitespace of the file, and nothing else', () => {
    const config = loadConfig({
      ...keys,
      DATABASE_URL_FILE: fileWith('database_url', 'mysql://ixapi:pw@db:3306/ixapi \r\n\n\t'),
      TOKEN_SIGNING_KEY: undefined,
      TOKEN_SIGNING_KEY_FILE: fileWith('token_signing_key', `${keys.TOKEN_SIGNING_KEY}\n`),
    });
    assert.equal(config.databaseUrl, 'mysql://ixapi:pw@db:3306/ixapi');
    assert.deepEqual(config.tokenSigningKey, new Uint8Array(Buffer.from(keys.TOKEN_SIGNING_KEY, 'base64')));
    // Leading whitespace belongs to the value: a namespace read as "  prod" is refused.
    errorOf({ ...keys, TEMPORAL_NAMESPACE_FILE: fileWith('namespace', '  prod\n') }, 'TEMPORAL_NAMESPACE');
  });

  it('refuses NAME and NAME_FILE together, naming both', () => {
    const file = fileWith('token_signing_key', keys.TOKEN_SIGNING_KEY);
    const error = errorOf(
      { ...keys, TOKEN_SIGNING_KEY_FILE: file },
      'TOKEN_SIGNING_KEY',
      keys.TOKEN_SIGNING_KEY,
    );
    assert.match(error.message, /\bTOKEN_SIGNING_KEY_FILE\b/);
  });

  it('refuses a missing or unreadable file, naming NAME_FILE and the path', () => {
    const missing = path.join(dir, 'no-such-file');
    const error = errorOf(
      { ...keys, API_SECRET_HASH_KEY: undefined, API_SECRET_HASH_KEY_FILE: missing },
      'API_SECRET_HASH_KEY_FILE',
    );
    assert.ok(error.message.includes(missing), error.message);
    const directory = errorOf({ ...keys, DATABASE_URL_FILE: dir }, 'DATABASE_URL_FILE');
    assert.ok(directory.message.includes(dir), directory.message);
  });

  it('refuses an empty file, or one of whitespace only, naming NAME_FILE and the path', () => {
    for (const content of ['', '\n', ' \r\n ']) {
      const file = fileWith('empty', content);
      const error = errorOf(
        { ...keys, TOKEN_SIGNING_KEY: undefined, TOKEN_SIGNING_KEY_FILE: file },
        'TOKEN_SIGNING_KEY_FILE',
      );
      assert.ok(error.message.includes(file), error.message);
    }
  });

  it('never shows the content of a secret whose value is refused', () => {
    const short = Buffer.alloc(16, 7).toString('base64');
    errorOf(
      { ...keys, TOKEN_SIGNING_KEY: undefined, TOKEN_SIGNING_KEY_FILE: fileWith('short_key', short) },
      'TOKEN_SIGNING_KEY',
      short,
    );
    errorOf(
      { ...keys, DATABASE_URL_FILE: fileWith('database_url', '//ixapi:s3cret@db:3306/ixapi\n') },
      'DATABASE_URL',
      's3cret',
    );
  });
});
