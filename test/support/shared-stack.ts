import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodeSearchAttributeIndexedValueType } from '@temporalio/common/lib/search-attributes';
import { msToTs } from '@temporalio/common/lib/time';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type mysql from 'mysql2/promise';
import { QueryTypes } from 'sequelize';
import { parseKey } from '../../config/config';
import { createLabStore } from '../../drivers/lab/store';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import { dropDatabase, ensureDatabase, openConnection, parseDatabaseUrl } from '../../db/connection';
import { migrate } from '../../db/migrator';
import { versionTriggers } from '../../db/migrations/0022-collection-versions';
import { seedDemo } from '../../db/seed';
import { sparePort } from '../../db/seed/catalogue';
import type { DemoCredential } from '../../db/seed/demo';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes';
import { bundleWorkflows } from '../../worker/create-worker';
import { startDevServer } from './temporal-dev-server';

/**
 * What the stacks of one integration run share, made once by mocha's global setup (in its main
 * process, however many processes run the files): the database every file's database is a copy of
 * (migrated and seeded), one Temporal dev server (each file has a namespace of its own on it), and
 * the workflows bundled once. Test processes find it through the file named in the environment.
 */
export interface SharedStack {
  /** The migrated and seeded database each file's database copies. */
  templateUrl: string;
  /** The template's tables: the statement that creates each (foreign keys included), and its copy. */
  tables: TableCopy[];
  /** The key the template's API secrets are hashed with: every file's stack must use it. */
  apiSecretHashKey: string;
  /** The demo accounts' credentials, as seeded in the template. */
  credentials: DemoCredential[];
  temporalAddress: string;
  workflowBundlePath: string;
  /** The run's own folder, removed at its end: files tests write go into it (`scratchFolder`). */
  folder: string;
}

interface TableCopy {
  create: string;
  copy: string;
}

/** How many connections copy the template's tables at once (creating tables is what takes long). */
const COPY_CONNECTIONS = 4;

/** The environment variable naming the run's shared stack file (inherited by mocha's workers). */
const SHARED = 'IXAPI_INTEGRATION_SHARED';

let running: { server: Promise<TestWorkflowEnvironment>; folder: string; templateUrl: string } | undefined;

export function installRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed already in this process
  }
}

/** A database URL on the test server (TEST_DATABASE_URL or DATABASE_URL) with a fresh, unique name. */
export function throwAwayDatabaseUrl(suffix = ''): string {
  const base = new URL(
    process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/ixapi',
  );
  base.pathname = `/ixapi_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}${suffix}`;
  return base.toString();
}

/** Once per run (mocha's global setup): the template database, the Temporal server and the bundle. */
export async function startSharedStack(): Promise<void> {
  installRuntime();
  const folder = mkdtempSync(path.join(tmpdir(), 'ixapi-integration-'));
  const templateUrl = throwAwayDatabaseUrl('_template');
  const apiSecretHashKey = randomBytes(32).toString('base64');
  const server = startDevServer({ namespace: 'ixapi' });
  running = { server, folder, templateUrl };
  try {
    const [env, template, bundle] = await Promise.all([
      server,
      buildTemplate(templateUrl, apiSecretHashKey),
      bundleWorkflows(),
    ]);
    const workflowBundlePath = path.join(folder, 'workflow-bundle.js');
    writeFileSync(workflowBundlePath, bundle.code);
    const shared: SharedStack = {
      templateUrl,
      tables: template.tables,
      apiSecretHashKey,
      credentials: template.credentials,
      temporalAddress: env.address,
      workflowBundlePath,
      folder,
    };
    const file = path.join(folder, 'shared-stack.json');
    writeFileSync(file, JSON.stringify(shared));
    process.env[SHARED] = file;
  } catch (error) {
    await stopSharedStack();
    throw error;
  }
}

/** Once per run (mocha's global teardown): stops the server, drops the template, removes the files. */
export async function stopSharedStack(): Promise<void> {
  const stopping = running;
  running = undefined;
  delete process.env[SHARED];
  if (!stopping) return;
  try {
    const server = await stopping.server.catch(() => undefined);
    await Promise.all([server?.teardown(), dropDatabase(stopping.templateUrl)]);
  } finally {
    rmSync(stopping.folder, { recursive: true, force: true });
  }
}

/**
 * A new folder for a test's files (a conformance ledger, a credentials file) inside the run's own
 * folder, which the run removes at its end however the test ended.
 */
export function scratchFolder(prefix: string): string {
  return mkdtempSync(path.join(sharedStack().folder, `${prefix}-`));
}

let loaded: SharedStack | undefined;

/** In a test process: what the run's global setup made. */
export function sharedStack(): SharedStack {
  const file = process.env[SHARED];
  if (!file) throw new Error('the integration run has no shared stack (test/integration/hooks.ts makes it)');
  loaded ??= JSON.parse(readFileSync(file, 'utf8')) as SharedStack;
  return loaded;
}

let bundleCode: { code: string } | undefined;

/** The run's workflow bundle, read once per process. */
export function sharedWorkflowBundle(): { code: string } {
  bundleCode ??= { code: readFileSync(sharedStack().workflowBundlePath, 'utf8') };
  return bundleCode;
}

/**
 * A copy of the template database under the name in `url` (created; it must not exist yet): its
 * tables are created over a few connections at once, foreign key checks off, then filled.
 */
export async function copyTemplate(url: string): Promise<void> {
  await ensureDatabase(url);
  const { tables } = sharedStack();
  const lanes = Array.from({ length: COPY_CONNECTIONS }, (_, lane) =>
    tables.filter((_, index) => index % COPY_CONNECTIONS === lane),
  );
  const connections = await Promise.all(lanes.map(() => connect(url)));
  const run = (statements: (table: TableCopy) => string) =>
    Promise.all(
      connections.map((connection, lane) =>
        connection.query(['SET SESSION foreign_key_checks = 0', ...lanes[lane].map(statements)].join(';\n')),
      ),
    );
  try {
    await run((table) => table.create);
    await run((table) => table.copy);
    // Tables copied as they are declared carry no triggers: the versions' are made as the migration
    // makes them, one database at a time (MariaDB may leave a trigger file of one database behind
    // when several create triggers at once).
    await connections[0].query(
      [
        "SELECT GET_LOCK('ixapi-test-triggers', 300)",
        ...versionTriggers(),
        "SELECT RELEASE_LOCK('ixapi-test-triggers')",
      ].join(';\n'),
    );
  } finally {
    await Promise.all(connections.map((connection) => connection.end()));
  }
}

/** A fresh name for a file's namespace on the run's Temporal server. */
export function namespaceName(): string {
  return `ixapi-${randomBytes(4).toString('hex')}`;
}

/** Registers `namespace` on the run's Temporal server, with the project's search attributes. */
export async function registerNamespace(
  connection: TestWorkflowEnvironment['connection'],
  namespace: string,
): Promise<void> {
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTES.map((key) => [key.name, encodeSearchAttributeIndexedValueType(key.type)!]),
    ),
  });
}

/**
 * The template: every migration, the demo exchange (its credentials hashed with `apiSecretHashKey`)
 * with the suite's extra ports, and the lab's devices; answers the credentials and the statements
 * that copy it (tables as the template declares them, foreign keys included, then their rows).
 */
async function buildTemplate(
  url: string,
  apiSecretHashKey: string,
): Promise<{ credentials: DemoCredential[]; tables: TableCopy[] }> {
  await ensureDatabase(url);
  const db = openDatabase({ url, apiSecretHashKey: parseKey('API_SECRET_HASH_KEY', apiSecretHashKey) });
  try {
    await migrate(db.sequelize);
    const credentials = await seedDemo(db);
    await addTestPorts(db);
    await createLabStore(db.sequelize).syncFromCatalogue();
    return { credentials, tables: await tablesOf(db, parseDatabaseUrl(url).database) };
  } finally {
    await db.close();
  }
}

async function tablesOf(db: Database, template: string): Promise<TableCopy[]> {
  const tables = await db.sequelize.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = :template AND table_type = 'BASE TABLE' ORDER BY table_name`,
    { replacements: { template }, type: QueryTypes.SELECT },
  );
  const copies: TableCopy[] = [];
  for (const { name } of tables) {
    const [created] = await db.sequelize.query<Record<string, string>>(`SHOW CREATE TABLE \`${name}\``, {
      type: QueryTypes.SELECT,
    });
    const columns = await db.sequelize.query<{ name: string }>(
      `SELECT column_name AS name FROM information_schema.columns
        WHERE table_schema = :template AND table_name = :name AND extra NOT LIKE '%GENERATED%'
        ORDER BY ordinal_position`,
      { replacements: { template, name }, type: QueryTypes.SELECT },
    );
    const list = columns.map((column) => `\`${column.name}\``).join(', ');
    copies.push({
      create: created['Create Table'],
      copy: `INSERT INTO \`${name}\` (${list}) SELECT ${list} FROM \`${template}\`.\`${name}\``,
    });
  }
  return copies;
}

function connect(url: string): Promise<mysql.Connection> {
  const { host, port, user, password, database } = parseDatabaseUrl(url);
  return openConnection({ host, port, user, password, database, multipleStatements: true });
}

/**
 * The demo exchange has 24 ports of 10G on each edge device (Hamburg has one); the suite orders more
 * than that over its run, so every edge device of the test exchange gets as many again.
 */
async function addTestPorts(db: Database): Promise<void> {
  const edges = await db.sequelize.query<{ id: string; pop: string }>(
    "SELECT id, pop FROM devices WHERE id LIKE '%-edge' ORDER BY id",
    { type: QueryTypes.SELECT },
  );
  const now = new Date();
  const rows = edges.flatMap((device) =>
    Array.from({ length: 24 }, (_, i) => ({
      ...sparePort({
        id: `port-test-${device.id.replace(/^dev-/, '')}-${String(i + 1).padStart(2, '0')}`,
        device: device.id,
        pop: device.pop,
        name: `et-0/1/${i}`,
        media_type: '10GBASE-LR',
        speed: 10_000,
      }),
      created_at: now,
      updated_at: now,
    })),
  );
  if (!rows.length) throw new Error('the demo exchange has no edge devices to add test ports to');
  await db.sequelize.getQueryInterface().bulkInsert('ports', rows);
}
