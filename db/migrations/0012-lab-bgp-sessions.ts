import type { QueryInterface } from 'sequelize';
import { DataTypes } from 'sequelize';
import { tableOptions } from './columns';

/**
 * BGP sessions of the lab fabric: what a route server (a lab device named like its network
 * feature) holds with a member's router. Names are the feature configs' ids, which tell upper from
 * lower case; the password is kept as the driver was given it, since the lab has no real secret.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable(
    'lab_bgp_sessions',
    {
      device: { type: DataTypes.STRING(80), allowNull: false, primaryKey: true },
      name: { type: DataTypes.STRING(80).BINARY, allowNull: false, primaryKey: true },
      peer_asn: { type: DataTypes.BIGINT, allowNull: false },
      peer_address: { type: DataTypes.STRING(39), allowNull: false },
      passive: { type: DataTypes.BOOLEAN, allowNull: false },
      password: { type: DataTypes.STRING(80).BINARY, allowNull: true },
      as_set: { type: DataTypes.STRING(100).BINARY, allowNull: true },
      max_prefix: { type: DataTypes.BIGINT, allowNull: true },
      insert_ixp_asn: { type: DataTypes.BOOLEAN, allowNull: false },
      flags: { type: DataTypes.TEXT, allowNull: false },
    },
    tableOptions,
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('lab_bgp_sessions');
}
