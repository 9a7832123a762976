import { ipAddresses } from '../../db/ips-collection';
import type { IpAddress } from '../../db/repositories/ip-repository';
import { ownedScope } from '../../db/scope';
import { accessToOwned } from '../../domain/authority';
import type { IpInput } from '../../domain/ip-registrations';
import { exchangeSetProblems, ipProblems } from '../../domain/ip-registrations';
import type { ResourceFamily } from '../families';
import { generatedWrites } from '../family-writes';
import { FAMILIES } from '../../domain/families';

type FoundIp = IpAddress & { exchangeAllocated: boolean };

/**
 * IP addresses, owned. The exchange allocates the addresses of exchange-LAN configs; their holders
 * may set a host name (`fqdn`), a validity window and their own reference, and nothing else.
 * Customers may register addresses of their own, outside the exchange's subnets, and change them
 * freely. Updates answer 200.
 */
export const ipsFamily: ResourceFamily = {
  name: FAMILIES.ip.collection,
  collections: () => [
    {
      collection: ipAddresses,
      list: 'ips_list',
      read: 'ips_read',
      scope: (visibility) => (_value, params) => ownedScope(params.bind(visibility.accounts)),
    },
  ],
  asynchronous: false,
  operations(deps) {
    const { ips } = deps.db;
    return {
      handlers: generatedWrites<IpInput, [FoundIp]>(this, deps, {
        access: (scope, ip) => accessToOwned(ip, scope),
        // The accounts of an address the exchange allocated stay as they are.
        references: (current) =>
          current?.exchangeAllocated ? [] : ['managing_account', 'consuming_account'],
        async problems(input, { now, current }) {
          if (current?.exchangeAllocated) {
            const fixed = exchangeSetProblems(input, current);
            return fixed.length ? fixed : ipProblems(input, now, []);
          }
          return ipProblems(input, now, await ips.exchangeSubnets());
        },
        create: async (input) => ({ resource: await ips.create(input) }),
        async change(id, decide) {
          const next = await decide(await ips.findById(id));
          return { resource: await ips.update(id, next) };
        },
      }),
    };
  },
};
