import { loadConfigOrExit } from '../config/config';
import { openDatabase } from '../db';
import { createLabStore } from '../drivers/lab/store';
import { seedDemo } from '../db/seed';
import { DEMO_CREDENTIALS_FILE, readDemoCredentials, writeDemoCredentials } from './demo-credentials';
import { ensureLocalSecrets } from './local-secrets';

/** Seeds the demo exchange (idempotent) and writes the demo credentials to .data/demo-credentials.json. */
async function main(): Promise<void> {
  if (process.env.NODE_ENV !== 'production') ensureLocalSecrets(process.env);
  const config = loadConfigOrExit();
  const db = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
  try {
    const accounts = await seedDemo(db, readDemoCredentials());
    // The lab devices the provisioning worker drives mirror the catalogue's devices and ports.
    await createLabStore(db.sequelize).syncFromCatalogue();
    writeDemoCredentials({ baseUrl: config.publicBaseUrl, accounts });
    process.stdout.write(
      `seeded ${accounts.length} demo accounts; credentials in ${DEMO_CREDENTIALS_FILE}\n`,
    );
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`seeding failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
