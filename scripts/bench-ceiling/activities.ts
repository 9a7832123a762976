import type { Sequelize } from 'sequelize';

/** The table the ceiling workflows write their state to, one row per workflow. */
export const CEILING_TABLE = 'bench_ceiling_state';

/** Creates the ceiling's table with one row per id, so that every activity is a plain UPDATE. */
export async function prepareCeilingTable(sequelize: Sequelize, rowIds: readonly string[]): Promise<void> {
  await sequelize.query(
    `CREATE TABLE IF NOT EXISTS ${CEILING_TABLE} (
       id VARCHAR(64) NOT NULL PRIMARY KEY,
       step INT NOT NULL,
       updated_at DATETIME(3) NOT NULL
     ) ENGINE=InnoDB`,
  );
  for (let start = 0; start < rowIds.length; start += 1000) {
    const chunk = rowIds.slice(start, start + 1000);
    await sequelize.query(
      `INSERT INTO ${CEILING_TABLE} (id, step, updated_at) VALUES ${chunk.map(() => '(?, 0, NOW(3))').join(', ')}`,
      { replacements: chunk },
    );
  }
}

/** The ceiling's only activity: a state write, as each provisioning step ends in one. */
export function createCeilingActivities(sequelize: Sequelize) {
  return {
    async writeState({ rowId, step }: { rowId: string; step: number }): Promise<void> {
      await sequelize.query(
        `UPDATE ${CEILING_TABLE} SET step = :step, updated_at = NOW(3) WHERE id = :rowId`,
        {
          replacements: { rowId, step },
        },
      );
    },
  };
}

export type CeilingActivities = ReturnType<typeof createCeilingActivities>;
