import { randomBytes } from 'node:crypto';
import type { Database } from '../../db';
import { stack } from './stack';

/**
 * A new top-level account in production, imported as an operator would, that no test has used: its
 * id is `prefix` with a random tail. It has no API key, contact or event but its import.
 */
export async function importFreshAccount(
  prefix: string,
  name: string,
  db: Database = stack().db,
): Promise<string> {
  const id = `${prefix}-${randomBytes(4).toString('hex')}`;
  await db.accounts.importAccount({
    id,
    name,
    address: {
      country: 'DE',
      locality: 'Berlin',
      postal_code: '10115',
      street_address: 'Unter den Linden 1',
    },
    managing_account: null,
  });
  return id;
}
