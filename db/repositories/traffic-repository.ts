import { IN_SERVICE_STATES } from '../../domain/states';
import type { Sequelize } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { CounterSample, CounterValues, TrafficSubjectType } from '../../domain/statistics';
import { COUNTER_NAMES } from '../../domain/statistics';
import { serviceScopeSql } from '../network-services-collection';

/**
 * Something sampled, the device interface its counters are read from, and who holds it now (its
 * managing and consuming accounts): each sample keeps them, and shows only them what it carried.
 */
export interface TrafficSubject {
  subjectType: TrafficSubjectType;
  subjectId: string;
  device: string;
  interfaceName: string;
  managingAccount: string;
  consumingAccount: string;
}

/** One reading of a subject's counters, as the collector stores it. */
export interface NewTrafficSample extends TrafficSubject, CounterValues {
  sampledAt: Date;
}

/** Light levels of a port's optics, one channel, as the collector last read them. */
export interface StoredOptics {
  port: string;
  txDbm: number;
  rxDbm: number;
  readAt: Date;
}

/** A subject's owners (who may see its statistics) and where it sits on the fabric. */
export interface TrafficSubjectFacts {
  managing_account: string;
  consuming_account: string;
  device: string;
  interfaceName: string;
}

/** The interface of a connection `c`: its LAG, or its one port. */
const connectionInterface =
  'COALESCE(c.lag_name, (SELECT MIN(p.name) FROM ports p WHERE p.connection = c.id))';
/** The interface of a config `n` on its connection `c`: the sub-interface of its outer tag. */
const configInterface = `CASE WHEN n.outer_vlan IS NULL THEN ${connectionInterface}
  ELSE CONCAT(${connectionInterface}, '.', n.outer_vlan) END`;

const COLUMN_OF: Record<(typeof COUNTER_NAMES)[number], string> = {
  octetsIn: 'octets_in',
  octetsOut: 'octets_out',
  packetsIn: 'packets_in',
  packetsOut: 'packets_out',
  errorsIn: 'errors_in',
  errorsOut: 'errors_out',
  discardsIn: 'discards_in',
  discardsOut: 'discards_out',
};
const COUNTER_COLUMNS = COUNTER_NAMES.map((name) => COLUMN_OF[name]);

type SampleRow = Record<string, string | number | Date>;

function toCounterSample(row: SampleRow): CounterSample {
  const sample = {
    at: new Date(row.sampled_at).getTime(),
    source: `${String(row.device)} ${String(row.interface_name)}`,
  } as CounterSample;
  // DECIMAL columns arrive as text; a counter past 2^53 keeps every digit.
  for (const name of COUNTER_NAMES) sample[name] = BigInt(String(row[COLUMN_OF[name]]));
  return sample;
}

/** Samples of traffic counters: what to sample, storing and pruning samples, and reading them back. */
export function createTrafficRepository(deps: { sequelize: Sequelize }) {
  const { sequelize } = deps;
  const select = <T extends object>(sql: string, replacements: Record<string, unknown>) =>
    sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

  return {
    /**
     * Every subject in service and the interface that carries it: each port of a connection in
     * service, each such connection itself (its LAG, or its one port when standalone), and each
     * network service config in service (the sub-interface of its outer tag on the connection's
     * LAG or port, or that LAG or port itself when untagged).
     */
    async subjectsInService(): Promise<TrafficSubject[]> {
      return select<TrafficSubject>(
        `SELECT 'port' AS subjectType, p.id AS subjectId, p.device, p.name AS interfaceName,
                c.managing_account AS managingAccount, c.consuming_account AS consumingAccount
           FROM ports p JOIN connections c ON c.id = p.connection
          WHERE c.state IN (:inService)
         UNION ALL
         SELECT 'connection', c.id, c.device, ${connectionInterface}, c.managing_account, c.consuming_account
           FROM connections c
          WHERE c.state IN (:inService) AND EXISTS (SELECT 1 FROM ports p WHERE p.connection = c.id)
         UNION ALL
         SELECT 'network_service_config', n.id, c.device, ${configInterface}, n.managing_account, n.consuming_account
           FROM network_service_configs n JOIN connections c ON c.id = n.connection
          WHERE n.state IN (:inService) AND EXISTS (SELECT 1 FROM ports p WHERE p.connection = c.id)
         ORDER BY subjectType, subjectId`,
        { inService: IN_SERVICE_STATES },
      );
    },

    /** Stores samples (one per subject and instant: a sample stored before is kept); returns how many are new. */
    async storeSamples(samples: readonly NewTrafficSample[]): Promise<number> {
      if (!samples.length) return 0;
      const rows = samples.map((sample) => [
        sample.subjectType,
        sample.subjectId,
        sample.sampledAt,
        sample.device,
        sample.interfaceName,
        sample.managingAccount,
        sample.consumingAccount,
        ...COUNTER_NAMES.map((name) => sample[name].toString()),
      ]);
      const [result] = await sequelize.query(
        `INSERT IGNORE INTO traffic_samples (subject_type, subject_id, sampled_at, device, interface_name,
           managing_account, consuming_account, ${COUNTER_COLUMNS.join(', ')}) VALUES ${rows.map(() => '(?)').join(', ')}`,
        { replacements: rows },
      );
      return Number((result as { affectedRows?: number }).affectedRows ?? samples.length);
    },

    /** Keeps each port's newest light levels, replacing what was read before. */
    async storeOptics(readings: readonly StoredOptics[]): Promise<void> {
      if (!readings.length) return;
      await sequelize.query(
        `INSERT INTO port_optics (port, tx_dbm, rx_dbm, read_at) VALUES ${readings.map(() => '(?)').join(', ')}
         ON DUPLICATE KEY UPDATE tx_dbm = VALUES(tx_dbm), rx_dbm = VALUES(rx_dbm), read_at = VALUES(read_at)`,
        { replacements: readings.map((r) => [r.port, r.txDbm, r.rxDbm, r.readAt]) },
      );
    },

    /** A port's light levels if they were read at or after `since`. */
    async opticsOf(port: string, since: Date): Promise<StoredOptics | undefined> {
      const [row] = await select<{ tx_dbm: number; rx_dbm: number; read_at: Date }>(
        'SELECT tx_dbm, rx_dbm, read_at FROM port_optics WHERE port = :port AND read_at >= :since',
        { port, since },
      );
      return (
        row && { port, txDbm: Number(row.tx_dbm), rxDbm: Number(row.rx_dbm), readAt: new Date(row.read_at) }
      );
    },

    /** Deletes the samples taken before `instant`; returns how many went. */
    async pruneBefore(instant: Date): Promise<number> {
      const [result] = await sequelize.query('DELETE FROM traffic_samples WHERE sampled_at < :instant', {
        replacements: { instant },
      });
      return Number((result as { affectedRows?: number }).affectedRows ?? 0);
    },

    /**
     * A subject's samples from `from` to `to` in time order, beginning with the last one taken at
     * or before `from` (it starts the first interval of the window); only those taken while one of
     * `accounts` held the subject (managed or consumed it), so that no interval spans another
     * holder's time.
     */
    async samplesOf(
      subjectType: TrafficSubjectType,
      subjectId: string,
      from: Date,
      to: Date,
      accounts: readonly string[],
    ): Promise<CounterSample[]> {
      const held = (alias: string) =>
        `(${alias}.managing_account IN (:accounts) OR ${alias}.consuming_account IN (:accounts))`;
      const rows = await select<SampleRow>(
        `SELECT sampled_at, device, interface_name, ${COUNTER_COLUMNS.join(', ')}
           FROM traffic_samples t
          WHERE subject_type = :subjectType AND subject_id = :subjectId AND sampled_at <= :to AND ${held('t')}
            AND sampled_at >= COALESCE((SELECT MAX(s.sampled_at) FROM traffic_samples s
                  WHERE s.subject_type = :subjectType AND s.subject_id = :subjectId AND s.sampled_at <= :from
                    AND ${held('s')}), :from)
          ORDER BY sampled_at`,
        { subjectType, subjectId, from, to, accounts },
      );
      return rows.map(toCounterSample);
    },

    /**
     * The configs of a network service that `accounts` manage or consume, whose traffic makes up
     * what they see of the service; undefined when there is no such service or they may not see it
     * (the rule of the network services collection: every exchange LAN, a service of theirs, a
     * circuit whose B side they are, a public multipoint service or one a rule lets them join).
     */
    async configsOfService(id: string, accounts: readonly string[]): Promise<string[] | undefined> {
      const [service] = await select<{ id: string }>(
        `SELECT t.id FROM network_services t WHERE t.id = :id AND ${serviceScopeSql(':accounts')}`,
        { id, accounts },
      );
      if (!service) return undefined;
      const configs = await select<{ id: string }>(
        `SELECT n.id FROM network_service_configs n
          WHERE n.network_service = :id AND (n.managing_account IN (:accounts) OR n.consuming_account IN (:accounts))
          ORDER BY n.id`,
        { id, accounts },
      );
      return configs.map((config) => config.id);
    },

    /** Who owns a port or connection and where it sits, or undefined when there is none. */
    async findSubject(subjectType: TrafficSubjectType, id: string): Promise<TrafficSubjectFacts | undefined> {
      const [row] =
        subjectType === 'port'
          ? await select<TrafficSubjectFacts>(
              `SELECT managing_account, consuming_account, device, name AS interfaceName
                 FROM ports WHERE id = :id`,
              { id },
            )
          : subjectType === 'connection'
            ? await select<TrafficSubjectFacts>(
                `SELECT managing_account, consuming_account, device, ${connectionInterface} AS interfaceName
                   FROM connections c WHERE id = :id`,
                { id },
              )
            : await select<TrafficSubjectFacts>(
                `SELECT n.managing_account, n.consuming_account, c.device, ${configInterface} AS interfaceName
                   FROM network_service_configs n JOIN connections c ON c.id = n.connection WHERE n.id = :id`,
                { id },
              );
      return row;
    },
  };
}

export type TrafficRepository = ReturnType<typeof createTrafficRepository>;
