import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

/** An unsigned 64-bit counter; DECIMAL so that it reaches JavaScript as text, without rounding. */
const counter = { type: DataTypes.DECIMAL(20, 0), allowNull: false, defaultValue: 0 };
const text = (length: number) => ({ type: DataTypes.STRING(length), allowNull: false });

/**
 * Traffic statistics: one sample of a subject's counters (a port, a connection) per sampling
 * interval, read from the device interface that carries it. The key is the way every read and the
 * pruning go: one subject's samples in time order. The lab fabric keeps, per interface, since when
 * it carries traffic and what it carried before, so its counters carry on across being disabled.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'traffic_samples',
    {
      subject_type: { ...text(32), primaryKey: true },
      subject_id: { ...text(80), primaryKey: true },
      sampled_at: { type: DataTypes.DATE(3), allowNull: false, primaryKey: true },
      device: text(80),
      interface_name: text(96),
      octets_in: counter,
      octets_out: counter,
      packets_in: counter,
      packets_out: counter,
      errors_in: counter,
      errors_out: counter,
      discards_in: counter,
      discards_out: counter,
    },
    tableOptions,
  );
  await qi.addIndex('traffic_samples', ['sampled_at']);
  await qi.addColumn('lab_interfaces', 'traffic_since', { type: DataTypes.DATE(3), allowNull: true });
  await qi.addColumn('lab_interfaces', 'octets_in', counter);
  await qi.addColumn('lab_interfaces', 'octets_out', counter);
  await qi.sequelize.query('UPDATE lab_interfaces SET traffic_since = NOW(3) WHERE enabled');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const column of ['octets_out', 'octets_in', 'traffic_since'])
    await qi.removeColumn('lab_interfaces', column);
  await qi.dropTable('traffic_samples');
}
