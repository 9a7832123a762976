import type { Sequelize, Transaction } from 'sequelize';
import { unitOfWork } from './unit-of-work';

export { isReadCommitted } from './unit-of-work';

/**
 * The unit of work of a write that takes something scarce (ports, VLAN tags, addresses) after
 * locking what serialises the takers: READ COMMITTED, retried on a conflict (db/unit-of-work.ts).
 */
export function allocatingTransaction<T>(
  sequelize: Sequelize,
  work: (transaction: Transaction) => Promise<T>,
  started?: (transaction: Transaction) => void,
): Promise<T> {
  return unitOfWork(sequelize, work, { isolation: 'read-committed', started });
}
