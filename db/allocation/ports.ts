import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { setTimeout as sleep } from 'node:timers/promises';
import { UnableToFulfillError } from '../../domain/errors';
import { allocatingTransaction } from '../transactions';

/** How long an order keeps looking while the ports it could take are held by orders in flight. */
const PATIENCE_MS = 15_000;
/** How many spare ports of a device are counted at most when devices are ranked by room left. */
const SPARE_COUNT_CAP = 64;

/** Where the ports of a connection must be, and what they must be like. */
export interface PortDemand {
  connection: string;
  /** The offering's handover PoP, or null to take any PoP of the metro area network. */
  pop: string | null;
  metroAreaNetwork: string;
  speed: number;
  quantity: number;
  /** The accounts the ports serve once allocated. */
  accounts: { managing_account: string; consuming_account: string; billing_account: string };
  /** The device the ports must be on (another member of an existing bundle); any device otherwise. */
  device?: string;
  /** The devices at the PoP or metro area network, when the caller read them already. */
  devices?: HandoverDevices;
}

/** The exchange's own account, which holds the spare ports, as a subquery. */
export const EXCHANGE_ACCOUNT = '(SELECT MIN(id) FROM accounts WHERE is_exchange = 1)';

/** The devices where an offering hands over, with the exchange's account (which holds spare ports). */
export interface HandoverDevices {
  exchange: string | null;
  list: ReadonlyArray<{ id: string; pop: string }>;
}

export interface AllocatedPorts {
  device: string;
  pop: string;
  ports: Array<{ id: string; name: string }>;
}

/**
 * Allocates and releases the exchange's spare ports. All ports of one connection sit on one device
 * (a bundle cannot span devices). Allocation locks the rows it takes and skips rows another
 * transaction holds, so concurrent orders never share a port and never wait on each other; an
 * order refused is one for which no device had room once the others had committed.
 */
export function createPortAllocation(sequelize: Sequelize) {
  const readCommitted = new WeakSet<Transaction>();
  // An allocation may wait for orders in flight while it holds its database connection. At most
  // half the pool does so at once; the rest queue here, without a connection, so that everything
  // else (the checks before an order, reads, the relay) always finds one.
  const slots = Math.max(1, Math.floor((sequelize.config.pool?.max ?? 10) / 2));
  let busy = 0;
  const queue: Array<() => void> = [];
  const acquire = async () => {
    if (busy < slots) {
      busy += 1;
      return;
    }
    await new Promise<void>((resolve) => queue.push(resolve));
  };
  const release = () => {
    const next = queue.shift();
    if (next) next();
    else busy -= 1;
  };
  return {
    /**
     * A transaction ports can be allocated in. Concurrent allocations lock index records of the
     * same PoP, and InnoDB may break such a tie by rolling one back as a deadlock victim; that one
     * is run again (everything it did was undone), a few times, after a short random pause.
     */
    async transaction<T>(work: (transaction: Transaction) => Promise<T>): Promise<T> {
      await acquire();
      try {
        return await allocatingTransaction(sequelize, work, (transaction) => readCommitted.add(transaction));
      } finally {
        release();
      }
    },

    /** Takes `quantity` spare ports on one device; throws unable-to-fulfill when no device has them. */
    /** Must run in a READ COMMITTED transaction (see `allocationTransaction`). */
    async allocate(demand: PortDemand, transaction: Transaction): Promise<AllocatedPorts> {
      if (!readCommitted.has(transaction))
        throw new Error('ports are allocated in transactions from portAllocation.transaction() only');
      const where = demand.device
        ? demand.device
        : demand.pop === null
          ? `in ${demand.metroAreaNetwork}`
          : `at ${demand.pop}`;
      const noPorts = () =>
        new UnableToFulfillError(
          demand.device ? 'connection' : 'product_offering',
          `no device ${where} has ${demand.quantity} free ${demand.speed} Mbit/s port(s)`,
        );
      // The devices at the PoP, or at every PoP of the metro area network, in one statement.
      const onDevice = demand.device ? ' AND d.id = :onDevice' : '';
      // With them the exchange's account, which holds the spare ports.
      const exchange = `${EXCHANGE_ACCOUNT} AS exchange`;
      const known = demand.devices && !demand.device ? demand.devices : undefined;
      const devices = known
        ? known.list.map((device) => ({ ...device, exchange: known.exchange }))
        : await sequelize.query<{ id: string; pop: string; exchange: string | null }>(
            demand.pop === null
              ? `SELECT d.id, d.pop, ${exchange} FROM devices d JOIN pops p ON p.id = d.pop
              WHERE p.metro_area_network = :man${onDevice} ORDER BY d.id`
              : `SELECT d.id, d.pop, ${exchange} FROM devices d WHERE d.pop = :pop${onDevice} ORDER BY d.id`,
            {
              replacements: {
                man: demand.metroAreaNetwork,
                pop: demand.pop,
                onDevice: demand.device ?? null,
              },
              type: QueryTypes.SELECT,
              transaction,
            },
          );
      if (!devices.length) throw noPorts();
      const atPops = devices.map((row) => row.id);
      const pops = [...new Set(devices.map((row) => row.pop))];
      const spare = `connection IS NULL AND managing_account = :exchange AND speed = :speed
        AND state = 'production' AND pop IN (:pops)${demand.device ? ' AND device = :onDevice' : ''}`;
      const replacements = {
        ...demand,
        ...demand.accounts,
        exchange: devices[0].exchange,
        pops,
        onDevice: demand.device ?? null,
      };
      // Devices with enough spare ports, fullest first so bundles keep devices compact. Each
      // device's spare ports are counted up to SPARE_COUNT_CAP only (through the spare-port index),
      // so an exchange with thousands of spare ports pays as little as one with a few: devices
      // with more than that many count as equally roomy. Read committed: each attempt sees what
      // other orders committed meanwhile.
      const cap = Math.max(demand.quantity, SPARE_COUNT_CAP);
      const counted = atPops
        .map(
          (_, i) =>
            `SELECT :device${i} AS device, COUNT(*) AS spare FROM (SELECT 1 FROM ports WHERE ${spare} AND device = :device${i} LIMIT ${cap}) x`,
        )
        .join(' UNION ALL ');
      const named = Object.fromEntries(atPops.map((device, i) => [`device${i}`, device]));
      const candidates = async () =>
        (
          await sequelize.query<{ device: string; spare: number | string }>(counted, {
            replacements: { ...replacements, ...named },
            type: QueryTypes.SELECT,
            transaction,
          })
        )
          .map((row) => ({ device: row.device, spare: Number(row.spare) }))
          .filter((row) => row.spare >= demand.quantity)
          .sort((a, b) => a.spare - b.spare || (a.device < b.device ? -1 : a.device > b.device ? 1 : 0));
      for (const deadline = Date.now() + PATIENCE_MS; Date.now() < deadline;) {
        const devices = await candidates();
        if (!devices.length) break;
        for (const { device } of devices) {
          // Skips ports other orders hold: they may take them, or leave them for the next attempt.
          const ports = await sequelize.query<{ id: string; name: string; pop: string }>(
            `SELECT id, name, pop FROM ports WHERE ${spare} AND device = :device
             ORDER BY id LIMIT :quantity FOR UPDATE SKIP LOCKED`,
            { replacements: { ...replacements, device }, type: QueryTypes.SELECT, transaction },
          );
          if (ports.length < demand.quantity) continue;
          await sequelize.query(
            `UPDATE ports SET connection = :connection, state = 'allocated', managing_account = :managing_account,
               consuming_account = :consuming_account, billing_account = :billing_account, updated_at = NOW(3)
             WHERE id IN (:ids)`,
            { replacements: { ...replacements, ids: ports.map((p) => p.id) }, transaction },
          );
          return { device, pop: ports[0].pop, ports: ports.map(({ id, name }) => ({ id, name })) };
        }
        // Every device with room had its ports held by orders still in flight: once they commit,
        // what they did not take is free again.
        await sleep(5 + Math.floor(Math.random() * 20));
      }
      throw noPorts();
    },

    /** Gives a connection's ports (or only the ones named) back to the exchange as spare ports. */
    async release(
      connection: string,
      exchange: string,
      transaction: Transaction,
      only?: readonly string[],
    ): Promise<number> {
      if (only && !only.length) return 0;
      const [result] = await sequelize.query(
        `UPDATE ports SET connection = NULL, state = 'production', managing_account = :exchange,
           consuming_account = :exchange, billing_account = :exchange, updated_at = NOW(3)
         WHERE connection = :connection${only ? ' AND id IN (:only)' : ''}`,
        { replacements: { connection, exchange, only: only ?? null }, transaction },
      );
      return (result as { affectedRows?: number }).affectedRows ?? 0;
    },
  };
}

export type PortAllocation = ReturnType<typeof createPortAllocation>;
