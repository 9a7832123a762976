import { DataTypes } from 'sequelize';

/** Column shapes the migrations share. Changing one changes no table that already exists. */
export const id = { type: DataTypes.STRING(80), primaryKey: true, allowNull: false };
export const timestamps = {
  created_at: { type: DataTypes.DATE(3), allowNull: false },
  updated_at: { type: DataTypes.DATE(3), allowNull: false },
};
export const tableOptions = { charset: 'utf8mb4', collate: 'utf8mb4_unicode_ci' };
