import { loadConfigOrExit } from '../config/config';
import { ensureDatabase } from '../db/connection';
import { openDatabase } from '../db';
import { migrate } from '../db/migrator';
import { ensureLocalSecrets } from './local-secrets';

/** Creates the database if it is missing and applies pending migrations. */
async function main(): Promise<void> {
  if (process.env.NODE_ENV !== 'production') ensureLocalSecrets(process.env);
  const config = loadConfigOrExit();
  await ensureDatabase(config.databaseUrl);
  const db = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
  try {
    const applied = await migrate(db.sequelize, (message) => process.stdout.write(`${message}\n`));
    process.stdout.write(
      applied.length ? `applied ${applied.length} migration(s)\n` : 'database is up to date\n',
    );
  } finally {
    await db.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
