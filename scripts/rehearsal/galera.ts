import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { OUTBOX_DELIVERED_TWICE } from '../../temporal/client';
import type { Verdict } from './checks';
import type { GaleraCluster } from './galera-cluster';
import { startGaleraCluster } from './galera-cluster';
import type { Exchange } from './traffic';

/**
 * The rehearsal on a Galera cluster (`npm run rehearse:galera`): three nodes of the Debian packages
 * in the rehearsal's folder, the fleet spread over them, one node killed while orders flow and
 * started again, and what must hold of the cluster afterwards.
 */

/** The node (0-based) each member of the fleet uses: every node serves, one serves two members. */
export const NODE_OF: Readonly<Record<string, number>> = {
  'api-1': 0,
  'api-2': 1,
  'worker-1': 2,
  'worker-2': 1,
};

/** The node killed mid-way: the one under an API and a worker. */
export const KILLED_NODE = 1;

/** How long a replica may still answer 503 after its node is synced again (its pool reconnects). */
const BACK_GRACE_MS = 10_000;

/** Three nodes, with what the service asks of a production cluster (deploy/galera/galera.cnf). */
export function startRehearsalCluster(folder: string): Promise<GaleraCluster> {
  return startGaleraCluster({ nodes: 3, folder, settings: ['wsrep_sync_wait=1'] });
}

/** When a node was down, the members that use it, and how it got back what it missed. */
export interface NodeDown {
  node: number;
  from: number;
  to: number;
  members: string[];
  joinedBy?: 'IST' | 'SST';
}

/** The members that use `node`. */
export const membersOn = (node: number): string[] =>
  Object.entries(NODE_OF)
    .filter(([, on]) => on === node)
    .map(([name]) => name);

/**
 * No 5xx but the documented retryable one: a 503 with Retry-After, from a replica whose node was
 * down, while it was (and a moment after, while its pool reconnects). Every request answered.
 */
export function answeredAroundNodeDown(exchanges: readonly Exchange[], down: NodeDown): Verdict[] {
  const serverErrors = exchanges.filter((e) => (e.status ?? 0) >= 500);
  const excused = (e: Exchange) =>
    e.status === 503 &&
    e.retryAfter !== undefined &&
    down.members.includes(e.api) &&
    e.endedAt >= down.from &&
    e.startedAt <= down.to + BACK_GRACE_MS;
  const unexcused = serverErrors.filter((e) => !excused(e));
  const unanswered = exchanges.filter((e) => e.status === undefined);
  const describe = (list: Exchange[]) =>
    list
      .slice(0, 5)
      .map((e) => `${e.method} ${e.path} on ${e.api}: ${e.status ?? e.transport}`)
      .join('; ');
  return [
    {
      check: 'no 5xx but a 503 with Retry-After from a replica whose node was down, while it was',
      ok: unexcused.length === 0,
      detail: unexcused.length
        ? describe(unexcused)
        : `${exchanges.length} requests; ${serverErrors.length} answered 503 with Retry-After by ${
            [...new Set(serverErrors.map((e) => e.api))].join(', ') || 'none'
          } while node ${down.node + 1} was down`,
    },
    {
      check: 'every request answered',
      ok: unanswered.length === 0,
      detail: unanswered.length ? describe(unanswered) : `${exchanges.length} answered`,
    },
  ];
}

/** No member sent an outbox message that another had delivered already (each says so in its log). */
export function deliveredOnce(logDir: string): Verdict {
  const twice = readdirSync(logDir)
    .filter((file) => file.endsWith('.log'))
    .flatMap((file) =>
      readFileSync(path.join(logDir, file), 'utf8')
        .split('\n')
        .filter((line) => line.includes(OUTBOX_DELIVERED_TWICE))
        .map(() => file),
    );
  return {
    check: 'no outbox message delivered twice',
    ok: twice.length === 0,
    detail: twice.length ? `${twice.length} in ${[...new Set(twice)].join(', ')}` : 'none in the logs',
  };
}

/** The conflicts each member ran again, as its metrics count them (what it is, not a check). */
export async function conflictsRetried(metrics: ReadonlyMap<string, string>): Promise<Verdict> {
  const counts: string[] = [];
  let total = 0;
  for (const [name, url] of metrics) {
    const text = await (await fetch(url, { signal: AbortSignal.timeout(5000) })).text();
    const n = Number(/^ixapi_db_conflicts_retried_total (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
    if (Number.isNaN(n)) return { check: 'conflicts run again', ok: false, detail: `${name}: no count` };
    total += n;
    counts.push(`${name} ${n}`);
  }
  return { check: 'conflicts run again', ok: true, detail: `${total} in all (${counts.join(', ')})` };
}

/**
 * The cluster is whole again: every node Synced in a cluster of three, and every table of the
 * service holding the same rows on each (row counts and CHECKSUM TABLE, each node first applying
 * everything committed before).
 */
export async function clusterConsistent(cluster: GaleraCluster, database: string): Promise<Verdict[]> {
  const states: string[] = [];
  for (let node = 0; node < cluster.size; node += 1) {
    const rows = await cluster.query<{ Variable_name: string; Value: string }>(
      node,
      "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_local_state_comment')",
    );
    const status = Object.fromEntries(rows.map((row) => [row.Variable_name, row.Value]));
    states.push(`${status.wsrep_local_state_comment} in ${status.wsrep_cluster_size}`);
  }
  // Galera replicates InnoDB tables only: a MEMORY table (the rate-limit counters) is each node's own.
  const engines = await cluster.query<{ name: string; engine: string }>(
    0,
    `SELECT table_name AS name, engine FROM information_schema.tables
      WHERE table_schema = '${database}' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const tables = engines.filter((row) => row.engine === 'InnoDB').map((row) => row.name);
  const ownPerNode = engines.filter((row) => row.engine !== 'InnoDB').map((row) => row.name);
  const names = tables.map((table) => `\`${database}\`.\`${table}\``);
  const counts = names.map((name, i) => `SELECT '${tables[i]}' AS t, COUNT(*) AS n FROM ${name}`);
  /** Per node, per table: its row count and checksum. */
  const perNode: Array<Map<string, string>> = [];
  for (let node = 0; node < cluster.size; node += 1) {
    const results = await cluster.query<unknown>(
      node,
      `SET SESSION wsrep_sync_wait = 15; ${counts.join(' UNION ALL ')}; CHECKSUM TABLE ${names.join(', ')}`,
    );
    const [, rows, sums] = results as [unknown, Array<{ t: string; n: number }>, Array<{ Checksum: string }>];
    perNode.push(new Map(rows.map((row, i) => [row.t, `${row.n} rows, checksum ${sums[i].Checksum}`])));
  }
  const differing = tables.filter((table) =>
    perNode.some((node) => node.get(table) !== perNode[0].get(table)),
  );
  const rowsOnFirst = [...perNode[0].values()].reduce((sum, entry) => sum + Number(entry.split(' ')[0]), 0);
  return [
    {
      check: `the cluster is back to ${cluster.size} nodes, all synced`,
      ok: states.every((state) => state === `Synced in ${cluster.size}`),
      detail: states.map((state, node) => `node ${node + 1} ${state}`).join(', '),
    },
    {
      check: 'every node holds the same rows',
      ok: differing.length === 0 && tables.length > 0,
      detail: differing.length
        ? differing
            .slice(0, 5)
            .map(
              (table) =>
                `${table}: ${perNode.map((node, i) => `node ${i + 1} ${node.get(table)}`).join('; ')}`,
            )
            .join(' | ')
        : `${tables.length} tables, ${rowsOnFirst} rows, the same counts and checksums on all ${cluster.size} nodes${
            ownPerNode.length ? ` (${ownPerNode.join(', ')} left out: not InnoDB, each node's own)` : ''
          }`,
    },
  ];
}
