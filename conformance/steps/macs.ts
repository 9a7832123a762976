import { randomBytes } from 'node:crypto';
import type { CheckContext } from '../runner';
import { idOf, newMarker } from './items';

/**
 * MAC addresses of the suite's own.
 */

/** A locally administered unicast MAC address nobody else uses. */
export const randomMac = (): string =>
  ['02', ...[...randomBytes(5)].map((byte) => byte.toString(16).padStart(2, '0'))].join(':');

/**
 * Registers a MAC address of the primary account's, written into the ledger first (found again by
 * its address, which `/macs` filters by); a MAC the exchange refuses leaves nothing to judge.
 */
export async function registerMac(t: CheckContext): Promise<{ id: string; seq: number }> {
  const primary = (await t.session()).accountId;
  const marker = newMarker();
  const address = randomMac();
  const seq = t.suite.ledger.intend({
    destroy: 'macs_destroy',
    role: 'primary',
    marker,
    find: t.suite.isDeclared('macs_list') ? { list: 'macs_list', query: `address=${address}` } : undefined,
  });
  const created = await t.call('macs_create', {
    body: { managing_account: primary, consuming_account: primary, address, external_ref: marker },
  });
  const mac = idOf(created.body);
  if (created.status !== 201 || mac === undefined) {
    t.suite.ledger.removed(seq);
    if (created.status === 400)
      t.inconclusive(`the exchange refused the suite's MAC address: ${created.text.slice(0, 200)}`);
    t.must(false, `registering a MAC address answered ${created.status}, not 201`);
    return t.inconclusive('without the MAC nothing else could be judged');
  }
  t.suite.ledger.created(seq, mac);
  return { id: mac, seq };
}
