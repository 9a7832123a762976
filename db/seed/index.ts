import type { Database } from '..';
import { seedCatalogue } from './catalogue';
import type { DemoCredential } from './demo';
import { seedDemoAccounts, seedDemoCloudCircuits } from './demo';

/**
 * Seeds the whole demo exchange: its accounts (with credentials), its catalogue and the circuits a
 * demo customer made at a lab cloud provider. Idempotent.
 */
export async function seedDemo(
  db: Database,
  known: readonly DemoCredential[] = [],
): Promise<DemoCredential[]> {
  const credentials = await seedDemoAccounts(db, known);
  await seedCatalogue(db.sequelize);
  await seedDemoCloudCircuits(db.sequelize);
  return credentials;
}
