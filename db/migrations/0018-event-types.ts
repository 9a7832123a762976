import type { QueryInterface } from 'sequelize';

const DOUBLED = 'network_service_config.network_service_config.';
const SINGLE = 'network_service_config.';

/**
 * Network service configs recorded their creation and changes (and a change's move to
 * `production_change_pending`) under a doubled name, `network_service_config.network_service_config.…`;
 * they take the name every other event of a config has. Only known kinds of event are listed.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(
    `UPDATE events SET type = CONCAT(:single, SUBSTRING(type, :from)) WHERE type LIKE :pattern`,
    {
      replacements: { single: SINGLE, from: DOUBLED.length + 1, pattern: `${DOUBLED.replace(/_/g, '\\_')}%` },
    },
  );
}

/** The doubled names were a mistake; which rows carried one is not kept, so nothing goes back. */
export async function down(): Promise<void> {}
