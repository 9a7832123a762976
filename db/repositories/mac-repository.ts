import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import { NotFoundError, UnableToFulfillError } from '../../domain/errors';
import { normaliseMac } from '../../domain/macs';
import { readResource } from '../collection';
import { liveRow } from '../references';
import { newId } from '../../domain/ids';
import { macs } from '../macs-collection';
import { allocatingTransaction } from '../transactions';
import type { EventRepository } from './event-repository';
import type { QuotaGuard } from './quota-guard';
import { unitOfWork } from '../unit-of-work';

/** What a MAC address registration names. */
export type NewMac = {
  managing_account: string;
  consuming_account: string;
  external_ref: string | null;
  address: string;
  valid_not_before: string | null;
  valid_not_after: string | null;
};

export interface Mac extends NewMac {
  id: string;
}

/** MAC addresses: registered once per consuming account, immutable, removed when no live config uses them. */
export function createMacRepository(deps: {
  sequelize: Sequelize;
  events: EventRepository;
  quotas: QuotaGuard;
}) {
  const { sequelize, events, quotas } = deps;
  const read = async (id: string, transaction?: Transaction) =>
    ((await readResource(sequelize, macs, id, undefined, transaction)) ?? undefined) as Mac | undefined;

  return {
    findById: (id: string) => read(id),

    /**
     * Registers an address for its consuming account. The same address registered for that account
     * already is a conflict naming the registration, and nothing is stored; so is one beyond the
     * quota of MACs of its managing account's tree.
     */
    async create(input: NewMac): Promise<Mac> {
      const address = normaliseMac(input.address);
      return allocatingTransaction(sequelize, async (transaction) => {
        await quotas.requireRoom(input.managing_account, { macs: 1 }, transaction);
        // Serialises registrations of one account, so two at once cannot both pass the check.
        await sequelize.query('SELECT id FROM accounts WHERE id = :account FOR UPDATE', {
          replacements: { account: input.consuming_account },
          transaction,
        });
        const [existing] = await sequelize.query<{ id: string }>(
          'SELECT id FROM macs WHERE consuming_account = :account AND address = :address',
          {
            replacements: { account: input.consuming_account, address },
            type: QueryTypes.SELECT,
            transaction,
          },
        );
        if (existing)
          throw new UnableToFulfillError('address', `${address} is registered for this account already`, [
            {
              resource_type: 'macs',
              resource_id: existing.id,
              resource_property: 'address',
              remote_resource_type: 'accounts',
              remote_resource_id: input.consuming_account,
            },
          ]);
        const id = newId('mac');
        await sequelize.query(
          `INSERT INTO macs (id, managing_account, consuming_account, external_ref, address, valid_not_before,
             valid_not_after, created_at, updated_at)
           VALUES (:id, :managing_account, :consuming_account, :external_ref, :address, :valid_not_before,
             :valid_not_after, NOW(3), NOW(3))`,
          {
            replacements: {
              ...input,
              id,
              address,
              valid_not_before: input.valid_not_before === null ? null : new Date(input.valid_not_before),
              valid_not_after: input.valid_not_after === null ? null : new Date(input.valid_not_after),
            },
            transaction,
          },
        );
        const mac = (await read(id, transaction))!;
        await events.appendFor(
          { type: 'mac.created', payload: { mac } },
          [mac.managing_account, mac.consuming_account],
          transaction,
        );
        return mac;
      });
    },

    /** Removes a registration once `allowed` accepts the caller; answers with what was removed. */
    async destroy(id: string, allowed: (mac: Mac) => void): Promise<Mac> {
      return unitOfWork(sequelize, async (transaction) => {
        await sequelize.query('SELECT id FROM macs WHERE id = :id FOR UPDATE', {
          replacements: { id },
          transaction,
        });
        const mac = await read(id, transaction);
        if (!mac) throw new NotFoundError(`no macs with id ${id}`);
        allowed(mac);
        // Only live configs hold on to their MACs: one whose configs are all going may be deleted
        // (it leaves their lists at once; their devices keep it until they are decommissioned).
        const users = await sequelize.query<{ id: string }>(
          `SELECT n.id FROM network_service_config_macs x JOIN network_service_configs n ON n.id = x.network_service_config
           WHERE x.mac = :id AND ${liveRow('n')} ORDER BY n.id`,
          { replacements: { id }, type: QueryTypes.SELECT, transaction },
        );
        if (users.length)
          throw new UnableToFulfillError(
            'id',
            `${mac.address} is in use on ${users.map((user) => user.id).join(', ')}; take it off ${users.length > 1 ? 'them' : 'it'} (change its macs) or decommission ${users.length > 1 ? 'them' : 'it'} first`,
            users.map((user) => ({
              resource_type: 'macs',
              resource_id: id,
              resource_property: 'macs',
              remote_resource_type: 'network-service-configs',
              remote_resource_id: user.id,
            })),
          );
        await sequelize.query('DELETE FROM network_service_config_macs WHERE mac = :id', {
          replacements: { id },
          transaction,
        });
        await sequelize.query('DELETE FROM macs WHERE id = :id', { replacements: { id }, transaction });
        await events.appendFor(
          { type: 'mac.deleted', payload: { mac } },
          [mac.managing_account, mac.consuming_account],
          transaction,
        );
        return mac;
      });
    },
  };
}

export type MacRepository = ReturnType<typeof createMacRepository>;
