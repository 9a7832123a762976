import type { Client } from '@temporalio/client';
import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { TRAFFIC_COLLECTOR_WORKFLOW_ID } from '../../domain/statistics';
import type { Exchange } from './traffic';

/** One verdict of the rehearsal: what was checked, whether it held, and what was found. */
export interface Verdict {
  check: string;
  ok: boolean;
  detail: string;
}

const rows = <T extends object>(db: Sequelize, sql: string, replacements: Record<string, unknown> = {}) =>
  db.query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** Orders the rehearsal placed: one row per external reference, and how it fared. */
export async function placedOnce(db: Sequelize, refs: readonly string[], like: string): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  for (const [table, kind] of [
    ['connections', 'connection'],
    ['network_service_configs', 'network_service_config'],
  ] as const) {
    const counted = await rows<{ external_ref: string; n: number }>(
      db,
      `SELECT external_ref, COUNT(*) AS n FROM ${table} WHERE external_ref LIKE :like GROUP BY external_ref`,
      { like },
    );
    const twice = counted.filter((row) => Number(row.n) !== 1).map((row) => row.external_ref);
    verdicts.push({
      check: `every ${kind} order placed exactly once`,
      ok: twice.length === 0,
      detail: `${counted.length} orders${twice.length ? `; placed more than once: ${twice.join(', ')}` : ''}`,
    });
    const live = await rows<{ id: string; n: number }>(
      db,
      `SELECT t.id, (SELECT COUNT(*) FROM events e
                       WHERE e.type = :type AND JSON_VALUE(e.payload, '$.id') = t.id
                         AND JSON_VALUE(e.payload, '$.to') = 'production') AS n
         FROM ${table} t WHERE t.external_ref LIKE :like`,
      { like, type: `${kind}.state_changed` },
    );
    const notOnce = live.filter((row) => Number(row.n) !== 1);
    verdicts.push({
      check: `every ${kind} reached production exactly once`,
      ok: notOnce.length === 0 && live.length > 0,
      detail: notOnce.length
        ? `${notOnce.length} did not: ${notOnce
            .slice(0, 5)
            .map((row) => `${row.id} (${row.n}×)`)
            .join(', ')}`
        : `${live.length} resources, one move to production each`,
    });
  }
  const total = (
    await rows<{ n: number }>(
      db,
      `SELECT (SELECT COUNT(*) FROM connections WHERE external_ref LIKE :like)
          + (SELECT COUNT(*) FROM network_service_configs WHERE external_ref LIKE :like) AS n`,
      { like },
    )
  )[0];
  verdicts.push({
    check: 'every order the clients placed exists',
    ok: Number(total.n) === refs.length,
    detail: `${total.n} stored of ${refs.length} placed`,
  });
  return verdicts;
}

/** Nothing booked twice: ports, VLANs (in the database and on the devices) and IP addresses. */
export async function bookedOnce(db: Sequelize, like: string): Promise<Verdict[]> {
  const ports = await rows<{ id: string; wanted: number; held: number }>(
    db,
    `SELECT c.id, c.port_quantity AS wanted, (SELECT COUNT(*) FROM ports p WHERE p.connection = c.id) AS held
       FROM connections c WHERE c.external_ref LIKE :like AND c.state = 'production'`,
    { like },
  );
  const wrongPorts = ports.filter((row) => Number(row.wanted) !== Number(row.held));
  const vlans = await rows<{ connection: string; outer_vlan: number; n: number }>(
    db,
    `SELECT connection, outer_vlan, COUNT(*) AS n FROM network_service_configs
      WHERE state NOT IN ('decommissioned', 'archived', 'cancelled') AND outer_vlan IS NOT NULL
      GROUP BY connection, outer_vlan HAVING COUNT(*) > 1`,
  );
  const deviceVlans = await rows<{ device: string; parent: string; outer_vlan: number; n: number }>(
    db,
    `SELECT device, parent, outer_vlan, COUNT(*) AS n FROM lab_services
      GROUP BY device, parent, outer_vlan, inner_vlan HAVING COUNT(*) > 1`,
  );
  const addresses = await rows<{ address: string; n: number }>(
    db,
    `SELECT address, COUNT(DISTINCT network_service_config) AS n FROM ip_addresses
      WHERE released_at IS NULL AND network_service_config IS NOT NULL
      GROUP BY network_service, address HAVING COUNT(DISTINCT network_service_config) > 1`,
  );
  const perConfig = await rows<{ id: string; v4: number; v6: number }>(
    db,
    `SELECT n.id,
            (SELECT COUNT(*) FROM ip_addresses i WHERE i.network_service_config = n.id AND i.version = 4
               AND i.released_at IS NULL) AS v4,
            (SELECT COUNT(*) FROM ip_addresses i WHERE i.network_service_config = n.id AND i.version = 6
               AND i.released_at IS NULL) AS v6
       FROM network_service_configs n WHERE n.external_ref LIKE :like AND n.state = 'production'`,
    { like },
  );
  const wrongAddresses = perConfig.filter((row) => Number(row.v4) !== 1 || Number(row.v6) !== 1);
  return [
    {
      check: 'no port booked twice',
      ok: wrongPorts.length === 0 && ports.length > 0,
      detail: wrongPorts.length
        ? `${wrongPorts.length} connections hold other than their port quantity`
        : `${ports.length} connections hold exactly their ports`,
    },
    {
      check: 'no VLAN booked twice',
      ok: vlans.length === 0 && deviceVlans.length === 0,
      detail:
        vlans.length + deviceVlans.length
          ? `${vlans.length} VLANs twice on a connection, ${deviceVlans.length} twice on a device port`
          : 'each VLAN once per connection and per device port',
    },
    {
      check: 'no address booked twice',
      ok: addresses.length === 0 && wrongAddresses.length === 0 && perConfig.length > 0,
      detail:
        addresses.length + wrongAddresses.length
          ? `${addresses.length} addresses held by two configs; ${wrongAddresses.length} configs without one IPv4 and one IPv6`
          : `${perConfig.length} configs with one IPv4 and one IPv6 address each, none shared`,
    },
  ];
}

export async function outboxDrained(db: Sequelize): Promise<Verdict> {
  const [row] = await rows<{ n: number; attempts: number }>(
    db,
    'SELECT COUNT(*) AS n, COALESCE(MAX(attempts), 0) AS attempts FROM workflow_outbox WHERE delivered_at IS NULL',
  );
  const [all] = await rows<{ n: number; retried: number }>(
    db,
    'SELECT COUNT(*) AS n, SUM(attempts > 0) AS retried FROM workflow_outbox',
  );
  return {
    check: 'no outbox row left undelivered',
    ok: Number(row.n) === 0,
    detail: `${row.n} undelivered of ${all.n}; ${Number(all.retried ?? 0)} needed the relay after a failed send`,
  };
}

/** No workflow failed, timed out or was terminated; none but the traffic collector still runs. */
export async function workflowsHealthy(client: Client): Promise<Verdict[]> {
  const count = async (query: string) => (await client.workflow.count(query)).count;
  const failed = await count(
    'ExecutionStatus = "Failed" OR ExecutionStatus = "TimedOut" OR ExecutionStatus = "Terminated"',
  );
  const running: string[] = [];
  for await (const execution of client.workflow.list({ query: 'ExecutionStatus = "Running"' })) {
    if (execution.workflowId !== TRAFFIC_COLLECTOR_WORKFLOW_ID) running.push(execution.workflowId);
  }
  const completed = await count('ExecutionStatus = "Completed"');
  return [
    { check: 'no workflow failed', ok: failed === 0, detail: `${failed} failed, ${completed} completed` },
    {
      check: 'no workflow stuck',
      ok: running.length === 0,
      detail: running.length
        ? `still running: ${running.slice(0, 5).join(', ')}`
        : 'only the traffic collector runs',
    },
  ];
}

/**
 * No 5xx at all; no request left without an answer but those the killed replica held between the
 * signal and its death (a connection the kernel accepted for it before it died is reset, not
 * refused), those sent to it later on a kept-alive connection the client took from its pool before
 * it had read the close (nothing reached a process: no process was left to take them), and those a
 * stopping replica's closing connections turned away before it read them.
 */
/**
 * What a request sent on a kept-alive connection of a dead process ends with: undici's
 * UND_ERR_SOCKET when the peer's close arrived first, a reset (or a broken pipe) when the kernel
 * answered the request's bytes on the closed socket first.
 */
const POOLED_SOCKET_CLOSED: ReadonlySet<string> = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

export function answeredRequests(
  exchanges: readonly Exchange[],
  killed: { api: string; at: number; dead: number },
  stopped: { api: string; at: number },
): Verdict[] {
  const serverErrors = exchanges.filter((e) => (e.status ?? 0) >= 500);
  const unanswered = exchanges.filter((e) => e.transport && e.transport !== 'ECONNREFUSED');
  const excused = (e: Exchange) =>
    (e.api === killed.api && e.startedAt <= killed.dead && e.endedAt >= killed.at) ||
    (e.api === killed.api && e.startedAt > killed.dead && POOLED_SOCKET_CLOSED.has(e.transport!)) ||
    (e.api === stopped.api && e.startedAt >= stopped.at);
  const unexcused = unanswered.filter((e) => !excused(e));
  const cutByKill = unanswered.filter((e) => e.api === killed.api && e.endedAt >= killed.at && excused(e));
  const openAtStop = exchanges.filter(
    (e) => e.api === stopped.api && e.startedAt < stopped.at && e.endedAt > stopped.at,
  );
  return [
    {
      check: 'no 5xx answer',
      ok: serverErrors.length === 0,
      detail: serverErrors.length
        ? serverErrors
            .slice(0, 5)
            .map((e) => `${e.method} ${e.path} → ${e.status} (${e.api})`)
            .join('; ')
        : `${exchanges.length} requests, none answered 5xx`,
    },
    {
      check: 'every request answered but those the killed replica held',
      ok: unexcused.length === 0,
      detail: unexcused.length
        ? unexcused
            .slice(0, 5)
            .map((e) => `${e.method} ${e.path} on ${e.api}: ${e.transport}`)
            .join('; ')
        : `${cutByKill.length} cut off by the kill of ${killed.api}; ${
            unanswered.length - cutByKill.length
          } turned away by ${stopped.api} while it closed`,
    },
    {
      check: `the stopping replica (${stopped.api}) answered every request it had under way`,
      ok: openAtStop.every((e) => e.status !== undefined),
      detail: `${openAtStop.length} requests under way at SIGTERM, ${
        openAtStop.filter((e) => e.status !== undefined).length
      } answered`,
    },
  ];
}
