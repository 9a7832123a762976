import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { QueryTypes } from 'sequelize';
import type { ApiService } from '../../api/server';
import { startApi } from '../../api/server';
import { loadConfig, parseKey } from '../../config/config';
import type { Database } from '../../db';
import { openDatabase } from '../../db';
import { ensureDatabase } from '../../db/connection';
import { migrate } from '../../db/migrator';
import { seedDemo } from '../../db/seed';
import type { DemoCredential } from '../../db/seed/demo';
import type { GaleraCluster } from '../../scripts/rehearsal/galera-cluster';
import { galeraPrograms, startGaleraCluster } from '../../scripts/rehearsal/galera-cluster';
import type { HttpResponse } from '../support/http';
import { request } from '../support/http';
import { freePort } from '../support/processes';
import { cannotRun } from '../support/system-tools';

/**
 * What the files of the Galera tier share, made once by the tier's global setup (its files run one
 * after another in one process): a cluster of three nodes, the service's database migrated through
 * node 1 and seeded with the demo exchange, and one `Database` per node.
 */
export interface GaleraStack {
  cluster: GaleraCluster;
  /** One per node, in the nodes' order. */
  dbs: Database[];
  database: string;
  apiSecretHashKey: string;
  credentials: DemoCredential[];
}

const NODES = 3;
const DATABASE = 'ixapi';

let current: GaleraStack | undefined;
let unavailable: string | undefined;

export async function startGaleraStack(): Promise<void> {
  const programs = galeraPrograms();
  if (typeof programs === 'string') {
    unavailable = programs;
    return;
  }
  const started = Date.now();
  const cluster = await startGaleraCluster({ nodes: NODES });
  const apiSecretHashKey = randomBytes(32).toString('base64');
  const open = (index: number) =>
    openDatabase({
      url: cluster.url(index, DATABASE),
      apiSecretHashKey: parseKey('API_SECRET_HASH_KEY', apiSecretHashKey),
      poolMax: 20,
    });
  const dbs: Database[] = [];
  try {
    await ensureDatabase(cluster.url(0, DATABASE));
    dbs.push(open(0));
    await migrate(dbs[0].sequelize);
    const credentials = await seedDemo(dbs[0]);
    for (let index = 1; index < NODES; index += 1) dbs.push(open(index));
    current = { cluster, dbs, database: DATABASE, apiSecretHashKey, credentials };
    process.stdout.write(
      `  (galera: ${NODES} nodes started, migrated and seeded in ${Date.now() - started} ms)\n`,
    );
  } catch (error) {
    await Promise.allSettled(dbs.map((db) => db.close()));
    await cluster.stop();
    throw error;
  }
}

export async function stopGaleraStack(): Promise<void> {
  const stopping = current;
  current = undefined;
  if (!stopping) return;
  try {
    await Promise.allSettled(stopping.dbs.map((db) => db.close()));
  } finally {
    await stopping.cluster.stop();
  }
}

/** The running stack, or `cannotRun` (a failure in CI, a skip elsewhere) where no cluster can start. */
export function galeraStack(context: Mocha.Context): GaleraStack {
  if (current) return current;
  return cannotRun(context, unavailable ?? 'the Galera cluster is not running');
}

/**
 * Rows of `sql` as node `index` answers, after it applied everything the cluster committed before
 * (`wsrep_sync_wait`): what a read there must see.
 */
export async function rowsOn<T extends object>(
  stack: GaleraStack,
  index: number,
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<T[]> {
  return stack.dbs[index].sequelize.transaction(async (transaction) => {
    await stack.dbs[index].sequelize.query('SET SESSION wsrep_sync_wait = 1', { transaction });
    try {
      return await stack.dbs[index].sequelize.query<T>(sql, {
        replacements,
        type: QueryTypes.SELECT,
        transaction,
      });
    } finally {
      await stack.dbs[index].sequelize.query('SET SESSION wsrep_sync_wait = 0', { transaction });
    }
  });
}

/**
 * One API process per node named, each on that node's database (as API replicas behind a balancer
 * would be spread over the cluster), with one token signing key, and no limits. No Temporal answers
 * them: the workflow messages their writes decide stay in the outbox.
 */
export async function startNodeApis(stack: GaleraStack, nodes: readonly number[]): Promise<ApiService[]> {
  const temporalAddress = `127.0.0.1:${await freePort()}`;
  const tokenSigningKey = randomBytes(32).toString('base64');
  const apis: ApiService[] = [];
  try {
    for (const node of nodes) {
      const config = loadConfig({
        DATABASE_URL: stack.cluster.url(node, stack.database),
        TOKEN_SIGNING_KEY: tokenSigningKey,
        API_SECRET_HASH_KEY: stack.apiSecretHashKey,
        TEMPORAL_ADDRESS: temporalAddress,
        LOG_LEVEL: 'silent',
        RATE_LIMIT_AUTH_PER_ADDRESS: '0',
        RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '0',
        RATE_LIMIT_AUTH_FAILURES_PER_KEY: '0',
        RATE_LIMIT_PER_ACCOUNT: '0',
        RATE_LIMIT_PER_ADDRESS: '0',
      });
      apis.push(
        await startApi({
          config,
          logger: pino({ level: 'silent' }),
          db: stack.dbs[node],
          port: 0,
          metricsPort: null,
          sending: { withinMs: 500, pauseMs: 60_000 },
        }),
      );
    }
    return apis;
  } catch (error) {
    await stopApis(apis);
    throw error;
  }
}

export async function stopApis(apis: readonly ApiService[]): Promise<void> {
  await Promise.all(apis.map((api) => api.stop(5_000)));
}

/** A login through `api` with the demo key of `accountId`: the answer, whatever it is. */
export function loginAt(stack: GaleraStack, api: ApiService, accountId: string): Promise<HttpResponse> {
  const credential = stack.credentials.find((c) => c.accountId === accountId);
  if (!credential) throw new Error(`no demo key of ${accountId}`);
  return request('POST', '/auth/token', {
    baseUrl: api.url,
    body: { api_key: credential.apiKey, api_secret: credential.apiSecret },
  });
}
