import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type {
  BgpSession,
  ConfigChange,
  CounterReading,
  DriverErrorCode,
  InterfaceState,
  LagConfig,
  OpticsReading,
  ServiceAttachment,
} from '../contract';
import { DriverError } from '../contract';
import type { DeviceSnapshot } from '../intent';
import { inverseOf } from '../intent';
import type { Counters } from './traffic';
import { countersOf, subInterfaceShare } from './traffic';
import type { BgpSessionRow, InterfaceRow, LagRow, ServiceRow } from './rows';
import { carried, storedMacs, toBgpSession, toInterface, toLag, toService } from './rows';
import { addCounters, NO_TRAFFIC, shareOf, subInterfaceOf, unknownCounterName } from '../counters';

/** Receive power the lab's optics are specified for, in dBm. */
export const OPTICS_RX_RANGE = { min: -14, max: 2 } as const;

export interface LabFault {
  /** A device, or every device when absent. */
  device?: string;
  /** Only calls that name this interface (reads of given interfaces); every call when absent. */
  interface?: string;
  operation:
    | 'load'
    | 'commit'
    | 'rollback'
    | 'readInterfaces'
    | 'readLags'
    | 'readOptics'
    | 'readServices'
    | 'readCounters'
    | 'readBgpSessions';
  /** A DriverError code, or `optics-low`: optics readings far below their range. */
  code: DriverErrorCode | 'optics-low';
  message?: string;
  /** How many calls it affects (default 1). */
  times?: number;
}

const inList = (names: readonly string[] | undefined) => (names ? ' AND name IN (:names)' : '');

/**
 * The lab fabric in the database: devices with a configuration version (switches and route
 * servers), interfaces that mirror the catalogue's ports, LAGs, services on them, the route
 * servers' BGP sessions, candidates, commits and injected faults. `clock` says when traffic starts
 * and stops as interfaces are enabled and disabled, and when counters are read.
 */
export function createLabStore(sequelize: Sequelize, clock: () => Date = () => new Date()) {
  const select = <T extends object>(
    sql: string,
    replacements: Record<string, unknown>,
    transaction?: Transaction,
  ) => sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction });
  const run = (sql: string, replacements: Record<string, unknown>, transaction?: Transaction) =>
    sequelize.query(sql, { replacements, transaction });

  async function lockDevice(device: string, transaction: Transaction): Promise<number> {
    const [row] = await select<{ version: number }>(
      'SELECT version FROM lab_devices WHERE device = :device FOR UPDATE',
      { device },
      transaction,
    );
    if (!row) throw new DriverError('invalid-config', `the lab has no device ${device}`);
    return Number(row.version);
  }

  /**
   * Traffic starts when an interface is enabled and stops when it is disabled; what it carried
   * until then is kept, so its counters carry on where they stood when it is enabled again.
   */
  async function trafficAfter(device: string, name: string, enabled: boolean, transaction: Transaction) {
    const [row] = await select<InterfaceRow>(
      'SELECT * FROM lab_interfaces WHERE device = :device AND name = :name FOR UPDATE',
      { device, name },
      transaction,
    );
    const now = clock();
    if (!row || enabled === (row.traffic_since !== null))
      return {
        since: row?.traffic_since ?? null,
        octetsIn: String(row?.octets_in ?? 0),
        octetsOut: String(row?.octets_out ?? 0),
      };
    if (enabled) return { since: now, octetsIn: String(row.octets_in), octetsOut: String(row.octets_out) };
    const { octetsIn, octetsOut } = carried(device, row, now.getTime());
    return { since: null, octetsIn: octetsIn.toString(), octetsOut: octetsOut.toString() };
  }

  async function apply(device: string, changes: readonly ConfigChange[], transaction: Transaction) {
    for (const change of changes) {
      if (change.kind === 'interface') {
        const after = change.after as InterfaceState;
        const traffic = await trafficAfter(device, change.name, after.enabled, transaction);
        await run(
          `UPDATE lab_interfaces SET description = :description, enabled = :enabled, lag = :lag,
             traffic_since = :since, octets_in = :octetsIn, octets_out = :octetsOut
           WHERE device = :device AND name = :name`,
          {
            device,
            name: change.name,
            description: after.description,
            enabled: after.enabled,
            lag: after.lag,
            ...traffic,
          },
          transaction,
        );
      } else if (change.kind === 'lag') {
        if (change.after === null) {
          await run(
            'DELETE FROM lab_lags WHERE device = :device AND name = :name',
            { device, name: change.name },
            transaction,
          );
        } else {
          const lag = change.after as LagConfig;
          await run(
            `INSERT INTO lab_lags (device, name, description, mode, lacp_timeout, members)
             VALUES (:device, :name, :description, :mode, :lacpTimeout, :members)
             ON DUPLICATE KEY UPDATE description = VALUES(description), mode = VALUES(mode),
               lacp_timeout = VALUES(lacp_timeout), members = VALUES(members)`,
            { device, ...lag, members: JSON.stringify(lag.members) },
            transaction,
          );
        }
      } else if (change.kind === 'bgp_session') {
        if (change.after === null) {
          await run(
            'DELETE FROM lab_bgp_sessions WHERE device = :device AND name = :name',
            { device, name: change.name },
            transaction,
          );
        } else {
          const session = change.after as BgpSession;
          await run(
            `INSERT INTO lab_bgp_sessions (device, name, peer_asn, peer_address, passive, password,
               as_set, max_prefix, insert_ixp_asn, flags)
             VALUES (:device, :name, :peerAsn, :peerAddress, :passive, :password, :asSet, :maxPrefix,
               :insertIxpAsn, :flags)
             ON DUPLICATE KEY UPDATE peer_asn = VALUES(peer_asn), peer_address = VALUES(peer_address),
               passive = VALUES(passive), password = VALUES(password), as_set = VALUES(as_set),
               max_prefix = VALUES(max_prefix), insert_ixp_asn = VALUES(insert_ixp_asn),
               flags = VALUES(flags)`,
            { device, ...session, flags: JSON.stringify(session.flags) },
            transaction,
          );
        }
      } else if (change.after === null) {
        await run(
          'DELETE FROM lab_services WHERE device = :device AND name = :name',
          { device, name: change.name },
          transaction,
        );
      } else {
        const service = change.after as ServiceAttachment;
        await run(
          `INSERT INTO lab_services (device, name, description, parent, vlan_type, outer_vlan, inner_vlan,
             macs, rate_limit, segment, isolated)
           VALUES (:device, :name, :description, :parent, :vlanType, :outerVlan, :innerVlan, :macs,
             :rateLimit, :segment, :isolated)
           ON DUPLICATE KEY UPDATE description = VALUES(description), parent = VALUES(parent),
             vlan_type = VALUES(vlan_type), outer_vlan = VALUES(outer_vlan),
             inner_vlan = VALUES(inner_vlan), macs = VALUES(macs), rate_limit = VALUES(rate_limit),
             segment = VALUES(segment), isolated = VALUES(isolated)`,
          {
            device,
            ...service,
            macs: storedMacs(service),
            // Commits recorded before services had segments hold none; rolling them back keeps the column's default.
            segment: service.segment ?? '',
            isolated: service.isolated ?? false,
          },
          transaction,
        );
      }
    }
  }

  return {
    /**
     * Adds a lab device for every catalogue device and route server (named like its network
     * feature) and an interface for every port; keeps what exists.
     */
    async syncFromCatalogue(): Promise<void> {
      await run('INSERT IGNORE INTO lab_devices (device, version) SELECT id, 0 FROM devices', {});
      await run(
        `INSERT IGNORE INTO lab_devices (device, version)
         SELECT id, 0 FROM network_features WHERE type = 'route_server'`,
        {},
      );
      await run(
        `INSERT IGNORE INTO lab_interfaces (device, name, description, enabled, speed, lag, rx_dbm, tx_dbm)
         SELECT device, name, '', FALSE, speed, NULL, -3.5, -2.0 FROM ports`,
        {},
      );
    },

    /**
     * What a call to a device meets, in one query: the device's own latency, and whether a fault
     * waits for this call (only then is one taken, in a transaction of its own).
     */
    async approach(
      device: string,
      operation: LabFault['operation'],
    ): Promise<{ latencyMs: number | null; faultPending: boolean }> {
      const [row] = await select<{ latency_ms: number | null; pending: number }>(
        `SELECT (SELECT latency_ms FROM lab_devices WHERE device = :device) AS latency_ms,
           EXISTS (SELECT 1 FROM lab_faults WHERE operation = :operation
             AND (device = :device OR device IS NULL) AND remaining > 0) AS pending`,
        { device, operation },
      );
      return { latencyMs: row?.latency_ms ?? null, faultPending: Boolean(Number(row?.pending ?? 0)) };
    },

    async setLatency(device: string, latencyMs: number | null): Promise<void> {
      await run('UPDATE lab_devices SET latency_ms = :latencyMs WHERE device = :device', {
        device,
        latencyMs,
      });
    },

    /** Every interface, LAG, service and BGP session of a device, with its configuration version. */
    async snapshot(device: string, transaction?: Transaction): Promise<DeviceSnapshot & { version: number }> {
      const [row] = await select<{ version: number }>(
        'SELECT version FROM lab_devices WHERE device = :device',
        { device },
        transaction,
      );
      if (!row) throw new DriverError('invalid-config', `the lab has no device ${device}`);
      const interfaces = await select<InterfaceRow>(
        'SELECT * FROM lab_interfaces WHERE device = :device',
        { device },
        transaction,
      );
      const lags = await select<LagRow>(
        'SELECT * FROM lab_lags WHERE device = :device',
        { device },
        transaction,
      );
      const services = await select<ServiceRow>(
        'SELECT * FROM lab_services WHERE device = :device',
        { device },
        transaction,
      );
      const bgpSessions = await select<BgpSessionRow>(
        'SELECT * FROM lab_bgp_sessions WHERE device = :device',
        { device },
        transaction,
      );
      return {
        version: Number(row.version),
        interfaces: new Map(interfaces.map((r) => [r.name, toInterface(r)])),
        lags: new Map(lags.map((r) => [r.name, toLag(r)])),
        services: new Map(services.map((r) => [r.name, toService(r)])),
        bgpSessions: new Map(bgpSessions.map((r) => [r.name, toBgpSession(r)])),
      };
    },

    async saveCandidate(candidate: {
      id: string;
      device: string;
      baseVersion: number;
      changes: ConfigChange[];
    }) {
      await run(
        `INSERT INTO lab_candidates (id, device, base_version, changes, created_at)
         VALUES (:id, :device, :baseVersion, :changes, NOW(3))`,
        { ...candidate, changes: JSON.stringify(candidate.changes) },
      );
    },

    async candidate(id: string): Promise<{ device: string; changes: ConfigChange[] } | undefined> {
      const [row] = await select<{ device: string; changes: string }>(
        'SELECT device, changes FROM lab_candidates WHERE id = :id',
        { id },
      );
      return row ? { device: row.device, changes: JSON.parse(row.changes) as ConfigChange[] } : undefined;
    },

    /**
     * Applies a candidate under a key, once: a key already committed answers with its commit. A
     * candidate loaded before the device last changed is stale.
     */
    async commit(
      candidateId: string,
      key: string,
      commitId: string,
    ): Promise<{ commitId: string; device: string; changes: ConfigChange[] }> {
      return sequelize.transaction(async (transaction) => {
        const [done] = await select<{ id: string; device: string; changes: string }>(
          'SELECT id, device, changes FROM lab_commits WHERE commit_key = :key',
          { key },
          transaction,
        );
        if (done)
          return {
            commitId: done.id,
            device: done.device,
            changes: JSON.parse(done.changes) as ConfigChange[],
          };
        const [candidate] = await select<{ device: string; base_version: number; changes: string }>(
          'SELECT device, base_version, changes FROM lab_candidates WHERE id = :candidateId',
          { candidateId },
          transaction,
        );
        if (!candidate)
          throw new DriverError('stale-candidate', `no candidate ${candidateId}; load the intent again`);
        const version = await lockDevice(candidate.device, transaction);
        if (version !== Number(candidate.base_version))
          throw new DriverError(
            'stale-candidate',
            `${candidate.device} changed since candidate ${candidateId} was loaded; load the intent again`,
          );
        const changes = JSON.parse(candidate.changes) as ConfigChange[];
        await apply(candidate.device, changes, transaction);
        await run(
          'UPDATE lab_devices SET version = version + 1 WHERE device = :device',
          candidate,
          transaction,
        );
        await run(
          `INSERT INTO lab_commits (id, commit_key, device, version, changes, rolled_back, created_at)
           VALUES (:commitId, :key, :device, :version, :changes, FALSE, NOW(3))`,
          { commitId, key, device: candidate.device, version: version + 1, changes: candidate.changes },
          transaction,
        );
        await run('DELETE FROM lab_candidates WHERE id = :candidateId', { candidateId }, transaction);
        return { commitId, device: candidate.device, changes };
      });
    },

    /** Undoes a commit's changes; a commit rolled back before is left alone. */
    async rollback(device: string, commitId: string): Promise<void> {
      await sequelize.transaction(async (transaction) => {
        await lockDevice(device, transaction);
        const [commit] = await select<{ changes: string; rolled_back: number | boolean }>(
          'SELECT changes, rolled_back FROM lab_commits WHERE id = :commitId AND device = :device FOR UPDATE',
          { commitId, device },
          transaction,
        );
        if (!commit) throw new DriverError('invalid-config', `${device} has no commit ${commitId}`);
        if (commit.rolled_back) return;
        await apply(device, inverseOf(JSON.parse(commit.changes) as ConfigChange[]), transaction);
        await run(
          'UPDATE lab_devices SET version = version + 1 WHERE device = :device',
          { device },
          transaction,
        );
        await run(
          'UPDATE lab_commits SET rolled_back = TRUE WHERE id = :commitId',
          { commitId },
          transaction,
        );
      });
    },

    async readInterfaces(device: string, names?: readonly string[]): Promise<InterfaceState[]> {
      const rows = await select<InterfaceRow>(
        `SELECT * FROM lab_interfaces WHERE device = :device${inList(names)} ORDER BY name`,
        { device, names },
      );
      return rows.map(toInterface);
    },

    async readLags(device: string, names?: readonly string[]): Promise<LagConfig[]> {
      const rows = await select<LagRow>(
        `SELECT * FROM lab_lags WHERE device = :device${inList(names)} ORDER BY name`,
        { device, names },
      );
      return rows.map(toLag);
    },

    async readServices(device: string, names?: readonly string[]): Promise<ServiceAttachment[]> {
      const rows = await select<ServiceRow>(
        `SELECT * FROM lab_services WHERE device = :device${inList(names)} ORDER BY name`,
        { device, names },
      );
      return rows.map(toService);
    },

    async readBgpSessions(device: string, names?: readonly string[]): Promise<BgpSession[]> {
      const rows = await select<BgpSessionRow>(
        `SELECT * FROM lab_bgp_sessions WHERE device = :device${inList(names)} ORDER BY name`,
        { device, names },
      );
      return rows.map(toBgpSession);
    },

    async readOptics(device: string, names: readonly string[], low = false): Promise<OpticsReading[]> {
      if (!names.length) return [];
      const rows = await select<InterfaceRow>(
        'SELECT * FROM lab_interfaces WHERE device = :device AND name IN (:names) ORDER BY name',
        { device, names },
      );
      return rows.map((row) => {
        const rxDbm = low ? -30 : Number(row.rx_dbm);
        return {
          interface: row.name,
          rxDbm,
          txDbm: Number(row.tx_dbm),
          inRange: rxDbm >= OPTICS_RX_RANGE.min && rxDbm <= OPTICS_RX_RANGE.max,
        };
      });
    },

    /**
     * Counters of interfaces, LAGs (the sum of their members) and sub-interfaces (a share of their
     * parent's traffic), all at one instant. An unknown name refuses the whole read.
     */
    async readCounters(device: string, names: readonly string[]): Promise<CounterReading[]> {
      if (!names.length) return [];
      const now = clock();
      const [known] = await select<{ device: string }>(
        'SELECT device FROM lab_devices WHERE device = :device',
        { device },
      );
      if (!known) throw new DriverError('invalid-config', `the lab has no device ${device}`);
      const rows = await select<InterfaceRow>('SELECT * FROM lab_interfaces WHERE device = :device', {
        device,
      });
      const lags = new Map(
        (await select<LagRow>('SELECT * FROM lab_lags WHERE device = :device', { device })).map((row) => [
          row.name,
          toLag(row),
        ]),
      );
      const byName = new Map(rows.map((row) => [row.name, row]));
      const ofInterface = (name: string): Counters | undefined => {
        const row = byName.get(name);
        if (!row) return undefined;
        const { profile, octetsIn, octetsOut } = carried(device, row, now.getTime());
        return countersOf(profile, octetsIn, octetsOut);
      };
      const ofInterfaceOrLag = (name: string): Counters | undefined => {
        if (byName.has(name)) return ofInterface(name);
        const lag = lags.get(name);
        return lag?.members.reduce(
          (total, member) => addCounters(total, ofInterface(member) ?? NO_TRAFFIC),
          NO_TRAFFIC,
        );
      };
      const counters = (name: string): Counters => {
        const direct = ofInterfaceOrLag(name);
        if (direct) return direct;
        const sub = subInterfaceOf(name);
        const parentCounters = sub && ofInterfaceOrLag(sub.parent);
        if (parentCounters) return shareOf(parentCounters, subInterfaceShare(device, name));
        throw unknownCounterName(device, name);
      };
      const readAt = now.toISOString();
      return names.map((name) => ({ interface: name, readAt, ...counters(name) }));
    },

    async injectFault(fault: LabFault): Promise<void> {
      await run(
        `INSERT INTO lab_faults (device, interface, operation, code, message, remaining)
         VALUES (:device, :interface, :operation, :code, :message, :times)`,
        {
          device: fault.device ?? null,
          interface: fault.interface ?? null,
          operation: fault.operation,
          code: fault.code,
          message: fault.message ?? `injected ${fault.code} on ${fault.operation}`,
          times: fault.times ?? 1,
        },
      );
    },

    async clearFaults(): Promise<void> {
      await run('DELETE FROM lab_faults', {});
    },

    /** Consumes one injected fault for this call, if one applies. */
    async takeFault(
      device: string,
      operation: LabFault['operation'],
      names?: readonly string[],
    ): Promise<{ code: LabFault['code']; message: string } | undefined> {
      return sequelize.transaction(async (transaction) => {
        const [fault] = await select<{ id: number; code: LabFault['code']; message: string }>(
          `SELECT id, code, message FROM lab_faults
           WHERE operation = :operation AND (device = :device OR device IS NULL) AND remaining > 0
             AND (interface IS NULL${names?.length ? ' OR interface IN (:names)' : ''})
           ORDER BY id LIMIT 1 FOR UPDATE`,
          { device, operation, names },
          transaction,
        );
        if (!fault) return undefined;
        await run('UPDATE lab_faults SET remaining = remaining - 1 WHERE id = :id', fault, transaction);
        return { code: fault.code, message: fault.message };
      });
    },
  };
}

export type LabStore = ReturnType<typeof createLabStore>;
