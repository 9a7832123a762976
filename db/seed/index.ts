import type { Database } from '..';
import { seedCatalogue } from './catalogue';
import type { DemoCredential } from './demo';
import { seedDemoAccounts } from './demo';

/** Seeds the whole demo exchange: its accounts (with credentials) and its catalogue. Idempotent. */
export async function seedDemo(
  db: Database,
  known: readonly DemoCredential[] = [],
): Promise<DemoCredential[]> {
  const credentials = await seedDemoAccounts(db, known);
  await seedCatalogue(db.sequelize);
  return credentials;
}
