import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

/**
 * Services of the lab fabric: what an exchange-LAN or virtual-circuit config puts on an interface
 * or LAG of a lab device (its parent), untagged, with one tag or with two, with the MACs it admits
 * and a rate limit. Names are the configs' ids, which tell upper from lower case.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'lab_services',
    {
      device: { type: DataTypes.STRING(80), allowNull: false, primaryKey: true },
      name: { type: DataTypes.STRING(80).BINARY, allowNull: false, primaryKey: true },
      description: { type: DataTypes.STRING(240), allowNull: false, defaultValue: '' },
      parent: { type: DataTypes.STRING(80), allowNull: false },
      vlan_type: { type: DataTypes.STRING(8), allowNull: false },
      outer_vlan: { type: DataTypes.INTEGER, allowNull: true },
      inner_vlan: { type: DataTypes.INTEGER, allowNull: true },
      macs: { type: DataTypes.TEXT, allowNull: false },
      rate_limit: { type: DataTypes.BIGINT, allowNull: true },
    },
    tableOptions,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('lab_services');
}
