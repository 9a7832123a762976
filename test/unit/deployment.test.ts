import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CONFIG_VARIABLES, loadConfig } from '../../config/config';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes';
import {
  compose,
  dependenciesOf,
  environmentOf,
  isOneShot,
  isPinned,
  mountedSecrets,
  rawCompose,
  read,
  references,
  ROOT,
  scriptOf,
  serviceNamed,
  specProblems,
  words,
} from '../support/compose';

/**
 * Static checks of the production deployment files: docker-compose.yml, Dockerfile, .dockerignore,
 * the Prometheus and Grafana configuration in deploy/ and docs/deployment.md. Docker is not needed;
 * the files are parsed and compared with the code, with each other, with the Temporal server
 * configuration (config/temporal/production.yaml) and with the Temporal version
 * scripts/temporal-server.sh pins.
 */

/** Contents of the secret files in ./secrets/, as an operator creates them (docs/deployment.md). */
const OPERATOR_SECRETS: Record<string, string> = {
  token_signing_key: `${Buffer.alloc(48, 1).toString('base64')}\n`,
  api_secret_hash_key: `${Buffer.alloc(48, 2).toString('base64')}\n`,
  mariadb_password: '0123456789abcdef0123456789abcdef\n',
  mariadb_root_password: 'fedcba9876543210fedcba9876543210\n',
  temporal_db_password: 'aaaabbbbccccddddeeeeffff00001111\n',
};

/** The Temporal server version `npm run rehearse` builds, from its one place: scripts/temporal-server.sh. */
function temporalVersion(): string {
  const match = /^VERSION="(\d+\.\d+\.\d+)"$/m.exec(read('scripts/temporal-server.sh'));
  assert.ok(match, 'scripts/temporal-server.sh has no line VERSION="x.y.z"');
  return match[1];
}

/** The template variables config/temporal/production.yaml documents in its opening comment. */
function temporalTemplateVariables(): Set<string> {
  const header = read('config/temporal/production.yaml')
    .split(/\r?\n/)
    .filter((line) => line.startsWith('#'))
    .join('\n');
  return new Set([...header.matchAll(/\bTEMPORAL_[A-Z_]+\b/g)].map(([name]) => name));
}

/** The recipe docs/deployment.md gives for secrets/database_url, as a printf format with one %s. */
function databaseUrlRecipe(): string {
  const match =
    /printf '(mysql:\/\/[^'%]*%s[^']*?)\\n' "\$\(cat secrets\/mariadb_password\)" > secrets\/database_url/.exec(
      read('docs/deployment.md'),
    );
  assert.ok(match, 'docs/deployment.md does not say how secrets/database_url is made from mariadb_password');
  return match[1];
}

/** Writes the operator's secret files into a temporary folder; returns their paths by secret name. */
function writeOperatorSecrets(dir: string): Record<string, string> {
  const contents: Record<string, string> = {
    ...OPERATOR_SECRETS,
    database_url: `${databaseUrlRecipe().replace('%s', OPERATOR_SECRETS.mariadb_password.trim())}\n`,
  };
  return Object.fromEntries(
    Object.entries(contents).map(([name, content]) => {
      const file = path.join(dir, name);
      writeFileSync(file, content, { mode: 0o600 });
      return [name, file];
    }),
  );
}

const APP_SERVICES = ['api', 'worker'] as const;
const CONFIG_NAMES = new Set(CONFIG_VARIABLES.map((variable) => variable.name));
const SECRET_NAMES = CONFIG_VARIABLES.filter((variable) => variable.secret).map((variable) => variable.name);
/** An environment variable that would carry a credential's value. */
const LOOKS_SECRET = /PASSWORD|SECRET|_KEY$|^DATABASE_URL$/;
/** Names that look like credentials but hold none (a rate limit counted per API key). */
const NOT_SECRETS = new Set(['RATE_LIMIT_AUTH_FAILURES_PER_KEY']);

describe('deployment: docker-compose.yml', () => {
  it('is a valid Compose file according to the compose-spec JSON schema', () => {
    const problems = specProblems(compose());
    assert.deepEqual(
      problems,
      [],
      `docker-compose.yml does not match the compose spec:\n${problems.join('\n')}`,
    );
  });

  it('references only variables that have a default or are required', () => {
    const loose = references()
      .filter(([match, braced, modifier]) => match !== '$$' && !(braced && modifier))
      .map(([match]) => match);
    assert.deepEqual(loose, [], 'a ${VAR} without :- or :? silently becomes an empty string');
  });

  it('pins every image to a version tag', () => {
    for (const [name, service] of Object.entries(compose().services)) {
      assert.ok(service.image, `service "${name}" names no image`);
      assert.ok(isPinned(service.image), `service "${name}" uses an unpinned image: ${service.image}`);
    }
  });

  it('gives every long-running service a health check', () => {
    for (const [name, service] of Object.entries(compose().services)) {
      if (isOneShot(service)) continue;
      const check = service.healthcheck;
      assert.ok(check, `service "${name}" has no healthcheck`);
      assert.notEqual(check.disable, true, `service "${name}" disables its healthcheck`);
      const test = words(check.test);
      assert.ok(test.length > 1 && test[0] !== 'NONE', `service "${name}" has an empty healthcheck test`);
    }
  });

  it('restarts every long-running service, and no one-shot job', () => {
    for (const [name, service] of Object.entries(compose().services)) {
      assert.ok(
        ['unless-stopped', 'always', 'no'].includes(service.restart ?? ''),
        `service "${name}" has the restart policy ${service.restart}`,
      );
    }
  });

  it('runs the schema, namespace and migration jobs once, before the services that need them', () => {
    const file = compose();
    const oneShots = Object.entries(file.services)
      .filter(([, service]) => isOneShot(service))
      .map(([name]) => name)
      .sort();
    assert.deepEqual(oneShots, ['migrate', 'temporal-admin-setup', 'temporal-schema']);
    for (const app of APP_SERVICES) {
      const deps = dependenciesOf(serviceNamed(file, app));
      for (const job of ['migrate', 'temporal-admin-setup']) {
        assert.equal(deps[job], 'service_completed_successfully', `${app} must wait for ${job} to succeed`);
      }
    }
    assert.equal(
      dependenciesOf(serviceNamed(file, 'temporal'))['temporal-schema'],
      'service_completed_successfully',
    );
  });

  it('runs two or more replicas of api and worker, each API replica on a host port of its own', () => {
    const file = compose();
    for (const app of APP_SERVICES) {
      const service = serviceNamed(file, app);
      assert.ok(Number(service.deploy?.replicas) >= 2, `${app} runs ${service.deploy?.replicas} replicas`);
      assert.equal(service.container_name, undefined, `${app} cannot be replicated with a container_name`);
    }
    const api = serviceNamed(file, 'api');
    for (const port of api.ports ?? []) {
      assert.equal(typeof port, 'string', 'api ports are written as strings');
      const match = /^(?:[^:]+:)?(\d+)(?:-(\d+))?:8000$/.exec(port as string);
      assert.ok(match, `api publishes port 8000 from a host port or range: ${String(port)}`);
      const size = Number(match[2] ?? match[1]) - Number(match[1]) + 1;
      assert.ok(
        size >= Number(api.deploy?.replicas),
        `the host ports ${String(port)} are fewer than the replicas`,
      );
    }
  });

  it('depends only on services that exist, waiting for health where there is a health check', () => {
    const file = compose();
    for (const [name, service] of Object.entries(file.services)) {
      for (const [target, condition] of Object.entries(dependenciesOf(service))) {
        const dependency = serviceNamed(file, target);
        const expected = isOneShot(dependency) ? 'service_completed_successfully' : 'service_healthy';
        assert.equal(condition, expected, `${name} -> ${target}`);
      }
    }
  });

  it('sets only configuration variables the code reads in the api and worker environments', () => {
    const file = compose();
    for (const app of APP_SERVICES) {
      const unknown = Object.keys(environmentOf(serviceNamed(file, app))).filter(
        (key) => !CONFIG_NAMES.has(key) && !CONFIG_NAMES.has(key.replace(/_FILE$/, '')),
      );
      assert.deepEqual(unknown, [], `${app} sets variables that are not in CONFIG_VARIABLES`);
    }
  });

  it('sets every variable without a usable default in the api and worker environments', () => {
    const file = compose();
    const required = ['TEMPORAL_ADDRESS', 'TOKEN_SIGNING_KEY', 'API_SECRET_HASH_KEY', 'DATABASE_URL'];
    for (const app of APP_SERVICES) {
      const env = environmentOf(serviceNamed(file, app));
      for (const name of required) {
        assert.ok(env[name] || env[`${name}_FILE`], `${app} does not set ${name} or ${name}_FILE`);
      }
    }
  });

  it('passes the application secrets as files only', () => {
    const file = rawCompose();
    for (const app of [...APP_SERVICES, 'migrate']) {
      const env = environmentOf(serviceNamed(file, app));
      const mounted = mountedSecrets(file, app);
      for (const name of SECRET_NAMES) {
        assert.equal(env[name], undefined, `${app} sets the secret ${name} as a value`);
        assert.ok(mounted.has(env[`${name}_FILE`] ?? ''), `${app}: ${name}_FILE names no mounted secret`);
      }
    }
  });

  it('keeps every credential in a secret file that the service mounts', () => {
    const file = rawCompose();
    for (const [name, service] of Object.entries(file.services)) {
      const mounted = mountedSecrets(file, name);
      for (const [key, value] of Object.entries(environmentOf(service))) {
        if (key.endsWith('_FILE')) {
          assert.ok(mounted.has(value), `${name}: ${key} names no mounted secret: ${value}`);
        } else {
          assert.ok(
            NOT_SECRETS.has(key) || !LOOKS_SECRET.test(key),
            `${name} sets the credential ${key} as a value`,
          );
        }
      }
      for (const [used] of scriptOf(service).matchAll(/\/run\/secrets\/[A-Za-z0-9_.-]+/g)) {
        assert.ok(mounted.has(used), `${name} reads ${used}, which it does not mount`);
      }
    }
    const used = new Set(
      Object.keys(file.services).flatMap((name) => [...mountedSecrets(file, name).values()]),
    );
    for (const [secret, definition] of Object.entries(file.secrets ?? {})) {
      assert.match(
        definition.file ?? '',
        /^\.\/secrets\/[a-z_]+$/,
        `secret ${secret} is not a file in ./secrets/`,
      );
      assert.ok(used.has(secret), `secret ${secret} is mounted nowhere`);
    }
  });

  it('gives api, worker and migrate an environment that passes the configuration checks', () => {
    const file = compose();
    const dir = mkdtempSync(path.join(tmpdir(), 'ixapi-secrets-'));
    try {
      const secretFiles = writeOperatorSecrets(dir);
      for (const app of [...APP_SERVICES, 'migrate']) {
        // Each *_FILE path in the container is the operator's file of the secret mounted there.
        const mounted = mountedSecrets(file, app);
        const env = Object.fromEntries(
          Object.entries(environmentOf(serviceNamed(file, app))).map(([key, value]) => [
            key,
            key.endsWith('_FILE') && mounted.has(value) ? secretFiles[mounted.get(value) ?? ''] : value,
          ]),
        );
        const config = loadConfig(env);
        assert.equal(config.nodeEnv, 'production', `${app}: NODE_ENV`);
        const temporalHost = (config.temporalAddress ?? '').split(':')[0];
        assert.ok(file.services[temporalHost], `${app}: TEMPORAL_ADDRESS names no service: ${temporalHost}`);
        const databaseUrl = new URL(config.databaseUrl);
        assert.ok(file.services[databaseUrl.hostname], `${app}: DATABASE_URL names no service`);
        const db = environmentOf(serviceNamed(file, databaseUrl.hostname));
        assert.equal(databaseUrl.pathname, `/${db.MARIADB_DATABASE}`, `${app}: database name`);
        assert.equal(databaseUrl.username, db.MARIADB_USER, `${app}: database user`);
        // The password in database_url is the one the db service gives its user.
        const dbPasswordFile = db.MARIADB_PASSWORD_FILE;
        const dbPasswordSecret = mountedSecrets(file, databaseUrl.hostname).get(dbPasswordFile) ?? '';
        assert.equal(databaseUrl.password, OPERATOR_SECRETS[dbPasswordSecret]?.trim(), `${app}: password`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('registers the namespace and every workflow search attribute in temporal-admin-setup', () => {
    const file = compose();
    const setup = serviceNamed(file, 'temporal-admin-setup');
    const script = [...words(setup.entrypoint), ...words(setup.command)].join(' ');
    const namespace = environmentOf(serviceNamed(file, 'api')).TEMPORAL_NAMESPACE;
    assert.ok(namespace, 'api sets no TEMPORAL_NAMESPACE');
    assert.equal(environmentOf(serviceNamed(file, 'worker')).TEMPORAL_NAMESPACE, namespace);
    assert.match(script, new RegExp(`namespace create --namespace ${namespace}\\b`));
    assert.match(
      script,
      new RegExp(`search-attribute create --namespace ${namespace}\\b[^\\n]*--type Keyword`),
    );
    for (const attribute of SEARCH_ATTRIBUTES) {
      assert.equal(attribute.type, 'KEYWORD', `${attribute.name} is registered as a Keyword`);
      assert.match(script, new RegExp(`\\b${attribute.name}\\b`), `${attribute.name} is not registered`);
    }
  });

  it('runs the Temporal server version that npm run rehearse builds (scripts/temporal-server.sh)', () => {
    const version = temporalVersion();
    const images = Object.entries(compose().services).map(([name, service]) => [name, service.image ?? '']);
    const servers = images.filter(([, image]) => image.startsWith('temporalio/server:'));
    const tools = images.filter(([, image]) => image.startsWith('temporalio/admin-tools:'));
    assert.deepEqual(
      servers.map(([name]) => name),
      ['temporal'],
    );
    assert.ok(tools.length >= 2, 'temporal-schema and temporal-admin-setup run the admin tools');
    for (const [name, image] of servers) assert.equal(image, `temporalio/server:${version}`, name);
    for (const [name, image] of tools) {
      const tag = image.slice(image.indexOf(':') + 1);
      assert.ok(tag === version || tag.startsWith(`${version}-`), `${name} runs ${image}, not ${version}`);
    }
    const autoSetup = images.filter(([, image]) => image.startsWith('temporalio/auto-setup'));
    assert.deepEqual(autoSetup, [], 'the auto-setup image is for development only');
  });

  it("starts the Temporal server from the repository's config/temporal/production.yaml", () => {
    const file = compose();
    const temporal = serviceNamed(file, 'temporal');
    const script = scriptOf(temporal);
    const option = (flag: string): string => {
      const match = new RegExp(`${flag}[ =](\\S+)`).exec(script);
      assert.ok(match, `the temporal command has no ${flag}`);
      return match[1];
    };
    assert.match(
      script,
      /\bexec temporal-server\b[^\n]*\bstart\b/,
      'the command does not start temporal-server',
    );
    const configDir = path.posix.join(option('--root'), option('--config'));
    const mounts = (temporal.volumes ?? []).map(String);
    const mount = mounts.find((volume) => volume.split(':')[1] === configDir);
    assert.ok(mount, `${configDir} is not mounted into temporal`);
    const [source, , mode] = mount.split(':');
    assert.equal(mode, 'ro', 'the configuration is mounted read-only');
    assert.equal(path.posix.normalize(source), 'config/temporal');
    const configFile = path.join(source, `${option('--env')}.yaml`);
    assert.ok(existsSync(path.join(ROOT, configFile)), `${configFile} does not exist`);
    assert.match(read(configFile).split('\n')[0], /^# enable-template/, `${configFile} is not a template`);

    // Every template variable the service sets is one the file documents and reads.
    const documented = temporalTemplateVariables();
    const env = environmentOf(temporal);
    const exported = [...script.matchAll(/\bexport ([A-Z_ ]+)/g)].flatMap(([, names]) =>
      names.trim().split(/\s+/),
    );
    for (const name of [...Object.keys(env), ...exported]) {
      assert.ok(documented.has(name), `temporal sets ${name}, which ${configFile} does not document`);
    }
    for (const name of ['TEMPORAL_DB_PASSWORD', 'TEMPORAL_BROADCAST_ADDRESS']) {
      assert.ok(exported.includes(name), `the temporal command does not set ${name}`);
    }
    assert.equal(env.TEMPORAL_BIND_IP, '0.0.0.0', 'the frontend must be reachable from the other services');
    assert.ok(file.services[env.TEMPORAL_DB_HOST], 'TEMPORAL_DB_HOST names no service');
    assert.equal(env.TEMPORAL_DB_USER, environmentOf(serviceNamed(file, env.TEMPORAL_DB_HOST)).POSTGRES_USER);

    // Ports: the frontend's gRPC port at the base, its HTTP API 10 above (production.yaml).
    const base = Number(env.TEMPORAL_PORT_BASE);
    for (const name of [...APP_SERVICES, 'temporal-admin-setup', 'temporal-ui']) {
      const address = environmentOf(serviceNamed(file, name)).TEMPORAL_ADDRESS;
      assert.equal(address, `temporal:${base}`, `${name}: TEMPORAL_ADDRESS`);
    }
    assert.ok(
      words(temporal.healthcheck?.test).some((word) => word.startsWith(`http://127.0.0.1:${base + 10}/`)),
      "the health check does not ask the frontend's HTTP API",
    );
  });

  it("prepares Temporal's databases with the schema tool of the same release before the server starts", () => {
    const file = compose();
    const env = environmentOf(serviceNamed(file, 'temporal'));
    const job = serviceNamed(file, 'temporal-schema');
    const script = scriptOf(job);
    assert.match(script, /temporal-sql-tool --plugin postgres12 /);
    assert.match(
      script,
      new RegExp(`--ep ${env.TEMPORAL_DB_HOST} -p ${env.TEMPORAL_DB_PORT} -u ${env.TEMPORAL_DB_USER}\\b`),
    );
    const databases: [string, string][] = [
      [env.TEMPORAL_DB_NAME, 'postgresql/v12/temporal'],
      [env.TEMPORAL_VISIBILITY_DB_NAME, 'postgresql/v12/visibility'],
    ];
    for (const [database, schema] of databases) {
      assert.ok(database, 'temporal names its databases');
      for (const step of [
        'create-database',
        'setup-schema -v 0.0',
        `update-schema --schema-name ${schema}`,
      ]) {
        assert.ok(
          script.includes(`--db ${database} ${step}`),
          `temporal-schema does not run: --db ${database} ${step}`,
        );
      }
    }
    assert.equal(dependenciesOf(job)[env.TEMPORAL_DB_HOST], 'service_healthy');
  });

  it('starts api, worker and migrate from files the production build emits', () => {
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    const expected: Record<string, string> = {
      api: 'dist/api/main.js',
      worker: 'dist/worker/main.js',
      migrate: 'dist/scripts/migrate.js',
    };
    const file = compose();
    for (const [name, script] of Object.entries(expected)) {
      const service = serviceNamed(file, name);
      assert.deepEqual(words(service.command), ['node', script], `${name} command`);
      assert.ok(service.build, `${name} is not built from the Dockerfile`);
      const sourceDir = script.split('/')[1];
      assert.ok(build.include.includes(sourceDir), `${sourceDir}/ is not compiled by tsconfig.build.json`);
    }
  });
});
