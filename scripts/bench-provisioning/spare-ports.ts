import { QueryTypes } from 'sequelize';
import type { Database } from '../../db';
import { sparePort } from '../../db/seed/catalogue';
import { BenchError } from '../bench-orders';

export interface OfferingFacts {
  speed: number;
  pop: string | null;
  metroAreaNetwork: string;
}

/** Where the offering hands over and at which speed, from the catalogue. */
export async function offeringFacts(database: Database, offering: string): Promise<OfferingFacts> {
  const [row] = await database.sequelize.query<{
    physical_port_speed: number | null;
    handover_pop: string | null;
    handover_metro_area_network: string;
  }>(
    `SELECT physical_port_speed, handover_pop, handover_metro_area_network FROM product_offerings
     WHERE id = :offering AND type = 'connection'`,
    { replacements: { offering }, type: QueryTypes.SELECT },
  );
  if (!row?.physical_port_speed)
    throw new BenchError(`BENCH_OFFERING: the demo exchange has no connection offering ${offering}`);
  return {
    speed: Number(row.physical_port_speed),
    pop: row.handover_pop,
    metroAreaNetwork: row.handover_metro_area_network,
  };
}

/**
 * Adds `count` spare ports at the offering's speed, spread over the devices of its handover PoP (or
 * metro area network) that carry ports of that speed already. Returns the devices they went to.
 */
export async function addSparePorts(
  database: Database,
  facts: OfferingFacts,
  count: number,
): Promise<string[]> {
  const devices = await database.sequelize.query<{ id: string; pop: string; media_type: string }>(
    `SELECT d.id, d.pop, MIN(p.media_type) AS media_type FROM devices d
     JOIN pops ON pops.id = d.pop JOIN ports p ON p.device = d.id AND p.speed = :speed
     WHERE ${facts.pop === null ? 'pops.metro_area_network = :man' : 'd.pop = :pop'}
     GROUP BY d.id, d.pop ORDER BY d.id`,
    {
      replacements: { speed: facts.speed, man: facts.metroAreaNetwork, pop: facts.pop },
      type: QueryTypes.SELECT,
    },
  );
  if (!devices.length) throw new BenchError(`no device carries ${facts.speed} Mbit/s ports for the offering`);
  const now = new Date();
  for (let start = 0; start < count; start += 1000) {
    const rows = [];
    for (let i = start; i < Math.min(start + 1000, count); i += 1) {
      const device = devices[i % devices.length];
      rows.push({
        ...sparePort({
          id: `port-bench-${String(i).padStart(6, '0')}`,
          device: device.id,
          pop: device.pop,
          name: `xe-9/0/${i}`,
          media_type: device.media_type,
          speed: facts.speed,
        }),
        created_at: now,
        updated_at: now,
      });
    }
    await database.sequelize.getQueryInterface().bulkInsert('ports', rows);
  }
  return devices.map((d) => d.id);
}
