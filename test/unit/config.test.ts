import assert from 'node:assert/strict';
import { CONFIG_VARIABLES, ConfigError, loadConfig, parseDuration } from '../../config/config';

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
    });
    assert.equal(config.port, 9000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.temporalAddress, 'temporal.example:7233');
    assert.equal(config.accessTokenTtlSeconds, 7200);
    assert.equal(config.refreshTokenTtlSeconds, 7 * 86400);
    assert.equal(config.publicBaseUrl, 'https://ixapi.example/api/v2');
    assert.equal(config.statsSampleIntervalSeconds, 60);
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
    failsOn('PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'nowhere' });
    failsOn('HEALTH_PROBE_TIMEOUT_MS', { HEALTH_PROBE_TIMEOUT_MS: '5' });
    failsOn('STATS_SAMPLE_INTERVAL_S', { STATS_SAMPLE_INTERVAL_S: '0' });
    failsOn('STATS_SAMPLE_INTERVAL_S', { STATS_SAMPLE_INTERVAL_S: '5m' });
    failsOn('TOKEN_SIGNING_KEY', { TOKEN_SIGNING_KEY: '' });
    failsOn('TOKEN_SIGNING_KEY', { TOKEN_SIGNING_KEY: Buffer.alloc(16).toString('base64') });
    failsOn('API_SECRET_HASH_KEY', { API_SECRET_HASH_KEY: keys.TOKEN_SIGNING_KEY });
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

  it('documents every variable it reads', () => {
    const names = CONFIG_VARIABLES.map((v) => v.name);
    assert.equal(new Set(names).size, names.length);
    for (const variable of CONFIG_VARIABLES) assert.ok(variable.description.length > 10, variable.name);
  });
});
