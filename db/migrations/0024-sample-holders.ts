import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

const holder = { type: DataTypes.STRING(80), allowNull: true };

/**
 * Each traffic sample records who held its subject when it was taken (the managing and consuming
 * accounts of the port, connection or config), so that a port handed to another member shows that
 * member none of the traffic it carried before. Samples taken before this are given the subject's
 * present holders only when they were taken since those holders had it: a port's since its present
 * connection took it (the connection's order, or the later reservation that brought the port), a
 * connection's or config's since its order. Older samples are nobody's; they age out.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('traffic_samples', 'managing_account', holder);
  await qi.addColumn('traffic_samples', 'consuming_account', holder);
  await qi.sequelize.query(
    `UPDATE traffic_samples s
       JOIN ports p ON p.id = s.subject_id
       JOIN connections c ON c.id = p.connection
        SET s.managing_account = c.managing_account, s.consuming_account = c.consuming_account
      WHERE s.subject_type = 'port'
        AND s.sampled_at >= GREATEST(c.created_at, COALESCE((SELECT MAX(r.created_at) FROM port_reservations r
              WHERE r.port = p.id AND r.connection = c.id), c.created_at))`,
  );
  for (const [subjectType, table] of [
    ['connection', 'connections'],
    ['network_service_config', 'network_service_configs'],
  ])
    await qi.sequelize.query(
      `UPDATE traffic_samples s JOIN ${table} t ON t.id = s.subject_id
          SET s.managing_account = t.managing_account, s.consuming_account = t.consuming_account
        WHERE s.subject_type = :subjectType AND s.sampled_at >= t.created_at`,
      { replacements: { subjectType } },
    );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('traffic_samples', 'consuming_account');
  await qi.removeColumn('traffic_samples', 'managing_account');
}
