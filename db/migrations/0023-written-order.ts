import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';

/**
 * The MACs of a network service config keep the order the client wrote them in: clients that model
 * the list as ordered (the Terraform provider does) would otherwise see a change in every plan.
 * Rows written before this keep the order they were read in until then, by MAC id.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('network_service_config_macs', 'position', {
    type: DataTypes.INTEGER,
    allowNull: false,
    defaultValue: 0,
  });
  await qi.sequelize.query(
    `UPDATE network_service_config_macs x JOIN (
       SELECT network_service_config, mac,
         ROW_NUMBER() OVER (PARTITION BY network_service_config ORDER BY mac) - 1 AS position
       FROM network_service_config_macs) ranked
     ON ranked.network_service_config = x.network_service_config AND ranked.mac = x.mac
     SET x.position = ranked.position`,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('network_service_config_macs', 'position');
}
