import { QueryTypes } from 'sequelize';
import { stack } from './stack';
import { eventually } from './wait';

/** States in which a connection's workflow is still changing it (and its ports) by itself. */
const MOVING = ['requested', 'allocated', 'testing'];

/**
 * Waits until every connection's provisioning has come to rest, so that tests after this one see
 * collections that do not change under them (a changing collection rightly refuses page tokens).
 */
export async function settleConnections(): Promise<void> {
  await eventually(
    'connections coming to rest',
    async () => {
      const [row] = await stack().db.sequelize.query<{ moving: number }>(
        'SELECT COUNT(*) AS moving FROM connections WHERE state IN (:moving)',
        { replacements: { moving: MOVING }, type: QueryTypes.SELECT },
      );
      return Number(row.moving) === 0 ? true : undefined;
    },
    30_000,
    200,
  );
}
