import type { Sequelize, Transaction } from 'sequelize';
import type { Conflict } from '../../domain/errors';
import { NotFoundError, UnableToFulfillError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import type { IpVersion } from '../../domain/ip-addresses';
import { firstFreeHost, formatAddress, parseAddress, parsePrefix } from '../../domain/ip-addresses';
import type { Tagging } from '../../domain/vlans';
import { chooseTags, taggingsCompatible } from '../../domain/vlans';
import { sqlOf } from '../collection';

const conflict = (
  resource_type: string,
  resource_id: string,
  resource_property: string | null,
  remote_resource_type: string,
  remote_resource_id: string,
): Conflict => ({ resource_type, resource_id, resource_property, remote_resource_type, remote_resource_id });

/**
 * What a network service config takes while it lives and gives back when it ends: VLAN tags on its
 * connection, an IPv4 and an IPv6 address from its service's subnets, and the MACs it names. Each
 * runs in the caller's transaction and locks what serialises the takers (the connection's row for
 * tags, the service's for addresses).
 */
export function createConfigAllocation(deps: { sequelize: Sequelize }) {
  const { select, run } = sqlOf(deps.sequelize);

  /**
   * The tagging a config gets on its connection beside the connection's other configs (the
   * connection's row locked, so two orders on one connection take their tags one after the
   * other): open tags chosen, a clash refused with the config it clashes with.
   */
  async function tagsOn(
    connection: string,
    wanted: Tagging,
    except: string | null,
    transaction: Transaction,
  ): Promise<Tagging> {
    await select('SELECT id FROM connections WHERE id = :connection FOR UPDATE', { connection }, transaction);
    const others = await select<Tagging & { id: string }>(
      `SELECT id, vlan_type, outer_vlan, outer_vlan_ethertype, inner_vlan FROM network_service_configs
       WHERE connection = :connection AND vlan_held AND id <> :except`,
      { connection, except: except ?? '' },
      transaction,
    );
    const chosen = chooseTags(wanted, others);
    if (!chosen) throw new UnableToFulfillError('vlan_config', `no VLAN is free on ${connection}`);
    const clashes = others.filter((other) => !taggingsCompatible(chosen, other));
    if (clashes.length)
      throw new UnableToFulfillError(
        'vlan_config',
        `the VLAN config clashes with ${clashes.map((c) => c.id).join(', ')} on ${connection}`,
        clashes.map((other) =>
          conflict('network-service-configs', other.id, 'vlan_config', 'connections', connection),
        ),
      );
    return chosen;
  }

  /**
   * One IPv4 and one IPv6 address from the service's subnets, the lowest free in each. The
   * service's row is locked, so concurrent orders take addresses one after the other; an address
   * released less than `quarantineSeconds` ago, or held by a route server, is not free. The unique
   * index on (service, address) guards the rule besides.
   */
  async function allocateAddresses(
    config: { id: string; network_service: string; managing_account: string; consuming_account: string },
    quarantineSeconds: number,
    transaction: Transaction,
  ): Promise<void> {
    const [service] = await select<{ subnet_v4: string | null; subnet_v6: string | null }>(
      'SELECT subnet_v4, subnet_v6 FROM network_services WHERE id = :id FOR UPDATE',
      { id: config.network_service },
      transaction,
    );
    if (!service) throw new NotFoundError(`no network service ${config.network_service}`);
    const held = await select<{ address: string; released_at: Date | null; resting: number }>(
      `SELECT address, released_at, (released_at > NOW(3) - INTERVAL :quarantine SECOND) AS resting
       FROM ip_addresses WHERE network_service = :service`,
      { service: config.network_service, quarantine: quarantineSeconds },
      transaction,
    );
    const features = await select<{ ip_v4: string | null; ip_v6: string | null }>(
      'SELECT ip_v4, ip_v6 FROM network_features WHERE network_service = :service',
      { service: config.network_service },
      transaction,
    );
    const taken = new Set<bigint>();
    const takenText = [
      ...held.filter((row) => row.released_at === null || Number(row.resting)).map((row) => row.address),
      ...features.flatMap((feature) => [feature.ip_v4, feature.ip_v6]),
    ];
    for (const text of takenText) {
      const parsed = text === null ? null : parseAddress(text);
      if (parsed) taken.add(parsed.value);
    }
    for (const [version, subnet] of [
      [4, service.subnet_v4],
      [6, service.subnet_v6],
    ] as Array<[IpVersion, string | null]>) {
      const prefix = subnet === null ? null : parsePrefix(subnet);
      if (!prefix) continue;
      const free = firstFreeHost(prefix, taken);
      if (free === null)
        throw new UnableToFulfillError(
          'network_service',
          `the IPv${version} subnet of ${config.network_service} is full`,
        );
      const address = formatAddress(version, free);
      // An address whose quarantine is over starts afresh.
      await run(
        'DELETE FROM ip_addresses WHERE network_service = :service AND address = :address AND released_at IS NOT NULL',
        { service: config.network_service, address },
        transaction,
      );
      await run(
        `INSERT INTO ip_addresses (id, managing_account, consuming_account, external_ref, version, address,
           prefix_length, fqdn, valid_not_before, valid_not_after, network_service, network_service_config,
           released_at, created_at, updated_at)
         VALUES (:id, :managing_account, :consuming_account, NULL, :version, :address, :prefix_length, NULL,
           NULL, NULL, :service, :config, NULL, NOW(3), NOW(3))`,
        {
          id: newId('ip'),
          managing_account: config.managing_account,
          consuming_account: config.consuming_account,
          version,
          address,
          prefix_length: prefix.length,
          service: config.network_service,
          config: config.id,
        },
        transaction,
      );
    }
  }

  async function replaceMacs(id: string, macs: readonly string[], transaction: Transaction) {
    await run(
      'DELETE FROM network_service_config_macs WHERE network_service_config = :id',
      { id },
      transaction,
    );
    // In the order the client wrote them: they read back so.
    for (const [position, mac] of [...new Set(macs)].entries())
      await run(
        'INSERT INTO network_service_config_macs (network_service_config, mac, position) VALUES (:id, :mac, :position)',
        { id, mac, position },
        transaction,
      );
  }

  /** The config's tags leave its connection and its addresses go back to the exchange. */
  async function release(id: string, transaction: Transaction): Promise<void> {
    await run(
      'UPDATE network_service_configs SET vlan_held = FALSE, updated_at = NOW(3) WHERE id = :id',
      { id },
      transaction,
    );
    const [exchange] = await select<{ id: string }>(
      'SELECT id FROM accounts WHERE is_exchange = 1 ORDER BY id LIMIT 1',
      {},
      transaction,
    );
    await run(
      `UPDATE ip_addresses SET released_at = NOW(3), network_service_config = NULL,
         managing_account = :exchange, consuming_account = :exchange, fqdn = NULL, external_ref = NULL,
         updated_at = NOW(3)
       WHERE network_service_config = :id`,
      { id, exchange: exchange?.id ?? '' },
      transaction,
    );
  }

  return { tagsOn, allocateAddresses, replaceMacs, release };
}

export type ConfigAllocation = ReturnType<typeof createConfigAllocation>;
