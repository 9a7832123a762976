import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

/** What lab services gain: the segment they join and whether they are isolated in it. */
const SERVICE_COLUMNS = {
  segment: { type: DataTypes.STRING(80), allowNull: false, defaultValue: '' },
  isolated: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
} as const;

/**
 * Services on lab devices join a segment (their network service), as leaves isolated in it; the
 * services configured before are given those of the configs they are named after.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const [name, column] of Object.entries(SERVICE_COLUMNS))
    await qi.addColumn('lab_services', name, column);
  await qi.sequelize.query(
    `UPDATE lab_services s JOIN network_service_configs n ON n.id = s.name
     SET s.segment = n.network_service, s.isolated = (n.role <=> 'leaf')`,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const name of Object.keys(SERVICE_COLUMNS)) await qi.removeColumn('lab_services', name);
}
