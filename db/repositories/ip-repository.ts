import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { NotFoundError, UnableToFulfillError } from '../../domain/errors';
import type { IpPrefix } from '../../domain/ip-addresses';
import { parsePrefix } from '../../domain/ip-addresses';
import type { IpInput } from '../../domain/ip-registrations';
import { canonicalAddress } from '../../domain/ip-registrations';
import { resourceReader } from '../collection';
import { ipAddresses } from '../ips-collection';
import { newId } from '../../domain/ids';
import { allocatingTransaction } from '../transactions';
import type { EventRepository } from './event-repository';
import type { QuotaGuard } from './quota-guard';
import { unitOfWork } from '../unit-of-work';

export interface IpAddress extends IpInput {
  id: string;
}

const instant = (value: string | null) => (value === null ? null : new Date(value));

/**
 * IP addresses outside allocation: reading one with whether the exchange allocated it, customers'
 * registrations of their own addresses, and changes of either (the allocation itself lives with
 * the network service configs).
 */
export function createIpRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  quotas: QuotaGuard;
}) {
  const { sequelize, events, quotas } = deps;
  const read = resourceReader<IpAddress>(sequelize, ipAddresses);
  const columns = (input: IpInput) => ({
    ...input,
    address: canonicalAddress(input.address),
    valid_not_before: instant(input.valid_not_before),
    valid_not_after: instant(input.valid_not_after),
  });

  /** Another registration of the same address for the same account, as a conflict. */
  async function refuseDuplicate(input: IpInput, except: string, transaction: Transaction) {
    // Serialises registrations of one account, so two at once cannot both pass the check.
    await sequelize.query('SELECT id FROM accounts WHERE id = :account FOR UPDATE', {
      replacements: { account: input.consuming_account },
      transaction,
    });
    const [existing] = await sequelize.query<{ id: string }>(
      `SELECT id FROM ip_addresses WHERE consuming_account = :account AND address = :address
         AND network_service IS NULL AND id <> :except`,
      {
        replacements: { account: input.consuming_account, address: canonicalAddress(input.address), except },
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (existing)
      throw new UnableToFulfillError('address', `${input.address} is registered for this account already`, [
        {
          resource_type: 'ips',
          resource_id: existing.id,
          resource_property: 'address',
          remote_resource_type: 'accounts',
          remote_resource_id: input.consuming_account,
        },
      ]);
  }

  return {
    /** The address, and whether the exchange allocated it (then its holder changes little of it). */
    async findById(id: string): Promise<(IpAddress & { exchangeAllocated: boolean }) | undefined> {
      const ip = await read(id);
      if (!ip) return undefined;
      const [row] = await sequelize.query<{ network_service: string | null }>(
        'SELECT network_service FROM ip_addresses WHERE id = :id',
        { replacements: { id }, type: QueryTypes.SELECT },
      );
      return { ...ip, exchangeAllocated: row?.network_service != null };
    },

    /** The subnets of the exchange's services, from which only the exchange allocates. */
    async exchangeSubnets(): Promise<IpPrefix[]> {
      const rows = await sequelize.query<{ subnet_v4: string | null; subnet_v6: string | null }>(
        'SELECT subnet_v4, subnet_v6 FROM network_services WHERE subnet_v4 IS NOT NULL OR subnet_v6 IS NOT NULL',
        { type: QueryTypes.SELECT },
      );
      return rows
        .flatMap((row) => [row.subnet_v4, row.subnet_v6])
        .flatMap((subnet) => {
          const prefix = subnet === null ? null : parsePrefix(subnet);
          return prefix ? [prefix] : [];
        });
    },

    /**
     * Registers a customer's own address, once per consuming account, within the quota of
     * registered addresses of its managing account's tree.
     */
    async create(input: IpInput): Promise<IpAddress> {
      return allocatingTransaction(sequelize, async (transaction) => {
        await quotas.requireRoom(input.managing_account, { ips: 1 }, transaction);
        await refuseDuplicate(input, '', transaction);
        const id = newId('ip');
        await sequelize.query(
          `INSERT INTO ip_addresses (id, managing_account, consuming_account, external_ref, version, address,
             prefix_length, fqdn, valid_not_before, valid_not_after, network_service, network_service_config,
             released_at, created_at, updated_at)
           VALUES (:id, :managing_account, :consuming_account, :external_ref, :version, :address, :prefix_length,
             :fqdn, :valid_not_before, :valid_not_after, NULL, NULL, NULL, NOW(3), NOW(3))`,
          { replacements: { ...columns(input), id }, transaction },
        );
        const ip = (await read(id, transaction))!;
        await events.appendFor(
          { type: 'ip.created', payload: { ip } },
          [ip.managing_account, ip.consuming_account],
          transaction,
        );
        return ip;
      });
    },

    /** Stores what a change leaves of the address. */
    async update(id: string, next: IpInput): Promise<IpAddress> {
      return unitOfWork(sequelize, async (transaction) => {
        const [row] = await sequelize.query<{ network_service: string | null }>(
          'SELECT network_service FROM ip_addresses WHERE id = :id FOR UPDATE',
          { replacements: { id }, type: QueryTypes.SELECT, transaction },
        );
        if (!row) throw new NotFoundError(`no ips with id ${id}`);
        if (row.network_service === null) await refuseDuplicate(next, id, transaction);
        await sequelize.query(
          `UPDATE ip_addresses SET managing_account = :managing_account, consuming_account = :consuming_account,
             external_ref = :external_ref, version = :version, address = :address, prefix_length = :prefix_length,
             fqdn = :fqdn, valid_not_before = :valid_not_before, valid_not_after = :valid_not_after,
             updated_at = NOW(3)
           WHERE id = :id`,
          { replacements: { ...columns(next), id }, transaction },
        );
        const ip = (await read(id, transaction))!;
        await events.appendFor(
          { type: 'ip.changed', payload: { ip } },
          [ip.managing_account, ip.consuming_account],
          transaction,
        );
        return ip;
      });
    },
  };
}

export type IpRepository = ReturnType<typeof createIpRepository>;
