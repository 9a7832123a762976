import { macs } from '../../db/macs-collection';
import type { Mac, NewMac } from '../../db/repositories/mac-repository';
import { ownedScope } from '../../db/scope';
import { accessToOwned } from '../../domain/authority';
import { macProblems } from '../../domain/macs';
import type { ResourceFamily } from '../families';
import { generatedWrites } from '../family-writes';
import { FAMILIES } from '../../domain/families';

/**
 * MAC address registrations, owned (the managing side changes, the consuming side reads): created
 * for accounts the caller acts for (unicast addresses only, a validity window ending in the future),
 * never changed (a new window means a new registration), and deleted by the managing side.
 */
export const macsFamily: ResourceFamily = {
  name: FAMILIES.mac.collection,
  collections: () => [
    {
      collection: macs,
      list: 'macs_list',
      read: 'macs_read',
      scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
    },
  ],
  asynchronous: false,
  operations(deps) {
    const { macs: store } = deps.db;
    return {
      handlers: generatedWrites<NewMac, [Mac]>(this, deps, {
        access: (scope, mac) => accessToOwned(mac, scope),
        references: ['managing_account', 'consuming_account'],
        problems: (input, { now }) => macProblems(input, now),
        create: async (input) => ({ resource: await store.create(input) }),
        destroy: async (id, allow) => ({ resource: await store.destroy(id, allow) }),
      }),
    };
  },
};
