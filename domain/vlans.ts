/**
 * How services are tagged on a connection, and which taggings can share one: a `port` service
 * takes the whole connection; a `dot1q` tag is used once; a `qinq` outer tag is never a `dot1q`
 * tag as well, and an (outer, inner) pair is used once.
 */

export type VlanType = 'port' | 'dot1q' | 'qinq';

/** A VLAN config as IX-API shows it. */
export type VlanConfig =
  | { vlan_type: 'port' }
  | { vlan_type: 'dot1q'; vlan?: number | null; vlan_ethertype?: string }
  | { vlan_type: 'qinq'; outer_vlan?: number | null; outer_vlan_ethertype?: string; inner_vlan: number };

/** A tagging as stored: the outer tag is the dot1q tag or the qinq outer tag. */
export interface Tagging {
  vlan_type: VlanType;
  outer_vlan: number | null;
  outer_vlan_ethertype: string | null;
  inner_vlan: number | null;
}

export const VLAN_MIN = 1;
export const VLAN_MAX = 4094;
/** Tags the exchange hands out when a config leaves the choice to it (VLAN 1 is left alone). */
const FIRST_CHOSEN = 2;

/** The tagging a config asks for; tags left null are for the exchange to choose. */
export function taggingOf(config: VlanConfig): Tagging {
  if (config.vlan_type === 'dot1q')
    return {
      vlan_type: 'dot1q',
      outer_vlan: config.vlan ?? null,
      outer_vlan_ethertype: config.vlan_ethertype ?? '0x8100',
      inner_vlan: null,
    };
  if (config.vlan_type === 'qinq')
    return {
      vlan_type: 'qinq',
      outer_vlan: config.outer_vlan ?? null,
      outer_vlan_ethertype: config.outer_vlan_ethertype ?? '0x8100',
      inner_vlan: config.inner_vlan,
    };
  return { vlan_type: 'port', outer_vlan: null, outer_vlan_ethertype: null, inner_vlan: null };
}

/** The VLAN config IX-API shows for a stored tagging. */
export function vlanConfigOf(tagging: Tagging): VlanConfig {
  if (tagging.vlan_type === 'dot1q')
    return {
      vlan_type: 'dot1q',
      vlan: tagging.outer_vlan,
      vlan_ethertype: tagging.outer_vlan_ethertype ?? '0x8100',
    };
  if (tagging.vlan_type === 'qinq')
    return {
      vlan_type: 'qinq',
      outer_vlan: tagging.outer_vlan,
      outer_vlan_ethertype: tagging.outer_vlan_ethertype ?? '0x8100',
      inner_vlan: tagging.inner_vlan ?? VLAN_MIN,
    };
  return { vlan_type: 'port' };
}

/** Whether two taggings can be carried on one connection side by side. */
export function taggingsCompatible(a: Tagging, b: Tagging): boolean {
  if (a.vlan_type === 'port' || b.vlan_type === 'port') return false;
  if (a.vlan_type === 'dot1q' || b.vlan_type === 'dot1q') return a.outer_vlan !== b.outer_vlan;
  return a.outer_vlan !== b.outer_vlan || a.inner_vlan !== b.inner_vlan;
}

/**
 * The tagging with its open tags chosen so that it fits beside `others`, or null when no tag is
 * free. Tags given are kept (whether they fit is `taggingsCompatible`'s to say).
 */
export function chooseTags(wanted: Tagging, others: readonly Tagging[]): Tagging | null {
  if (wanted.vlan_type === 'port' || wanted.outer_vlan !== null) return wanted;
  // A fresh outer tag: used by no other service on the connection.
  const used = new Set(others.map((other) => other.outer_vlan));
  for (let tag = FIRST_CHOSEN; tag <= VLAN_MAX; tag += 1) {
    if (!used.has(tag)) return { ...wanted, outer_vlan: tag };
  }
  return null;
}
