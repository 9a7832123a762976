import type { ChildProcess } from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTES } from '../../domain/search-attributes';
import { PROJECT_ROOT } from '../local-secrets';

/** What the rehearsal's Temporal server runs on: the machine's PostgreSQL, two databases of its own. */
export interface TemporalSetup {
  binaries: string;
  portBase: number;
  database: string;
  visibilityDatabase: string;
  namespace: string;
  logFile: string;
}

const POSTGRES = { host: '127.0.0.1', port: 5432, user: 'postgres' };

/** Installs (once) the pinned server and schema tool; answers the folder that holds them. */
export function installTemporalServer(): string {
  const output = execFileSync('bash', [path.join(PROJECT_ROOT, 'scripts/temporal-server.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return output.trim().split('\n').pop()!;
}

const sqlTool =
  (setup: TemporalSetup) =>
  (database: string, ...args: string[]) =>
    execFileSync(
      path.join(setup.binaries, 'temporal-sql-tool'),
      [
        '--plugin',
        'postgres12',
        '--ep',
        POSTGRES.host,
        '-p',
        String(POSTGRES.port),
        '-u',
        POSTGRES.user,
        '--db',
        database,
        ...args,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );

/** The persistence and visibility schemas, on fresh databases, with the server's own SQL tool. */
export function createSchemas(setup: TemporalSetup): void {
  const tool = sqlTool(setup);
  for (const [database, schema] of [
    [setup.database, 'postgresql/v12/temporal'],
    [setup.visibilityDatabase, 'postgresql/v12/visibility'],
  ]) {
    tool(database, 'drop-database', '--force');
    tool(database, 'create-database');
    tool(database, 'setup-schema', '-v', '0.0');
    tool(database, 'update-schema', '--schema-name', schema);
  }
}

/** Drops the server's two databases (once it has stopped). */
export function dropSchemas(setup: TemporalSetup): void {
  const tool = sqlTool(setup);
  for (const database of [setup.database, setup.visibilityDatabase])
    tool(database, 'drop-database', '--force');
}

export const temporalAddress = (setup: TemporalSetup) => `127.0.0.1:${setup.portBase}`;

/** Starts the server from the repository's configuration file (the one compose mounts). */
export function startTemporalServer(setup: TemporalSetup): ChildProcess {
  const log = createWriteStream(setup.logFile, { flags: 'a' });
  const child = spawn(
    path.join(setup.binaries, 'temporal-server'),
    [
      '--root',
      PROJECT_ROOT,
      '--config',
      'config/temporal',
      '--env',
      'production',
      '--allow-no-auth',
      'start',
    ],
    {
      env: {
        ...process.env,
        TEMPORAL_DB_HOST: POSTGRES.host,
        TEMPORAL_DB_PORT: String(POSTGRES.port),
        TEMPORAL_DB_USER: POSTGRES.user,
        TEMPORAL_DB_NAME: setup.database,
        TEMPORAL_VISIBILITY_DB_NAME: setup.visibilityDatabase,
        TEMPORAL_PORT_BASE: String(setup.portBase),
        TEMPORAL_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return child;
}

async function until<T>(what: string, probe: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await probe();
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`${what}: ${error instanceof Error ? error.message : String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Waits until the frontend serves the namespace. */
export async function temporalServes(setup: TemporalSetup, timeoutMs = 60_000): Promise<void> {
  const connection = await until(
    'the Temporal frontend did not answer',
    () => Connection.connect({ address: temporalAddress(setup), connectTimeout: 1000 }),
    timeoutMs,
  );
  try {
    await until(
      `namespace ${setup.namespace} is not served`,
      () => connection.workflowService.describeNamespace({ namespace: setup.namespace }),
      timeoutMs,
    );
  } finally {
    await connection.close();
  }
}

/** Registers the namespace and the search attributes the workflows set, as temporal-admin-setup does. */
export async function registerNamespace(setup: TemporalSetup): Promise<void> {
  const connection = await until(
    'the Temporal frontend did not answer',
    () => Connection.connect({ address: temporalAddress(setup), connectTimeout: 1000 }),
    60_000,
  );
  try {
    await until(
      'the namespace could not be registered',
      async () => {
        try {
          await connection.workflowService.registerNamespace({
            namespace: setup.namespace,
            workflowExecutionRetentionPeriod: msToTs('1 day'),
          });
        } catch (error) {
          if (!/already exists/i.test(String(error))) throw error;
        }
      },
      60_000,
    );
    await until(
      'the namespace is not usable',
      () => connection.workflowService.describeNamespace({ namespace: setup.namespace }),
      60_000,
    );
    const KEYWORD = 2; // temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
    await until(
      'the search attributes could not be added',
      async () => {
        const listed = await connection.operatorService.listSearchAttributes({ namespace: setup.namespace });
        const missing = SEARCH_ATTRIBUTES.filter((key) => !(key.name in (listed.customAttributes ?? {})));
        if (missing.length === 0) return;
        await connection.operatorService.addSearchAttributes({
          namespace: setup.namespace,
          searchAttributes: Object.fromEntries(missing.map((key) => [key.name, KEYWORD])),
        });
        throw new Error(`added ${missing.map((key) => key.name).join(', ')}; looking again`);
      },
      60_000,
    );
  } finally {
    await connection.close();
  }
}
