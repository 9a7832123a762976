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
      // Spare ports of the exchange's (the account that holds them) of the speed, on device `d`, at
      // its PoP, seen through `alias`.
      const spareOn = (alias: string) =>
        `${alias}.device = d.id AND ${alias}.connection IS NULL AND ${alias}.speed = :speed
           AND ${alias}.managing_account = x.exchange AND ${alias}.state = 'production' AND ${alias}.pop = d.pop`;
      // The devices at the PoP, or at every PoP of the metro area network, each with its spare ports
      // and the exchange's account, in one statement, fullest first so bundles keep devices compact.
      // Each device's spare ports are counted up to SPARE_COUNT_CAP only (through the spare-port
      // index: those up to the cap-th), so an exchange with thousands of spare ports pays as little
      // as one with a few: devices with more than that many count as equally roomy. Read committed:
      // each attempt sees what other orders committed meanwhile.
      const cap = Math.max(demand.quantity, SPARE_COUNT_CAP);
      const counted = `SELECT d.id AS device, d.pop, x.exchange,
           (SELECT COUNT(*) FROM ports p WHERE ${spareOn('p')} AND p.id <= COALESCE(
              (SELECT c.id FROM ports c WHERE ${spareOn('c')} ORDER BY c.id LIMIT 1 OFFSET ${cap - 1}), p.id)
           ) AS spare
         FROM devices d
         ${demand.pop === null ? 'JOIN pops m ON m.id = d.pop' : ''}
         CROSS JOIN (SELECT MIN(id) AS exchange FROM accounts WHERE is_exchange = 1) x
         WHERE ${demand.pop === null ? 'm.metro_area_network = :man' : 'd.pop = :pop'}
           ${demand.device ? 'AND d.id = :onDevice' : ''}`;
      const replacements = {
        ...demand,
        ...demand.accounts,
        man: demand.metroAreaNetwork,
        onDevice: demand.device ?? null,
      };
      const candidates = async () => {
        const rows = await sequelize.query<{
          device: string;
          pop: string;
          exchange: string | null;
          spare: number | string;
        }>(counted, { replacements, type: QueryTypes.SELECT, transaction });
        return rows
          .map((row) => ({ ...row, spare: Number(row.spare) }))
          .filter((row) => row.spare >= demand.quantity)
          .sort((a, b) => a.spare - b.spare || (a.device < b.device ? -1 : a.device > b.device ? 1 : 0));
      };
      for (const deadline = Date.now() + PATIENCE_MS; Date.now() < deadline;) {
        const devices = await candidates();
        if (!devices.length) break;
        for (const { device, pop, exchange } of devices) {
          // Skips ports other orders hold: they may take them, or leave them for the next attempt.
          const ports = await sequelize.query<{ id: string; name: string; pop: string }>(
            `SELECT id, name, pop FROM ports WHERE device = :device AND connection IS NULL AND speed = :speed
               AND managing_account = :exchange AND state = 'production' AND pop = :pop
             ORDER BY id LIMIT :quantity FOR UPDATE SKIP LOCKED`,
            {
              replacements: { ...replacements, device, pop, exchange },
              type: QueryTypes.SELECT,
              transaction,
            },
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
