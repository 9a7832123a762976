import { QueryTypes } from 'sequelize';
import { request } from './http';
import { stack } from './stack';

/** Where each property that names other resources points, by the collection its ids live in. */
export const REFERENCE_PATHS: Readonly<Record<string, string>> = {
  role_assignments: '/role-assignments',
  contact: '/contacts',
  role: '/roles',
  macs: '/macs',
  connection: '/connections',
  port_reservations: '/port-reservations',
  ports: '/ports',
  port: '/ports',
  pop: '/pops',
  network_service: '/network-services',
  network_service_config: '/network-service-configs',
  network_feature: '/network-features',
  network_features: '/network-features',
  network_feature_configs: '/network-feature-configs',
  member_joining_rules: '/member-joining-rules',
  ips: '/ips',
  ip: '/ips',
  product_offering: '/product-offerings',
  nsc_product_offerings: '/product-offerings',
  managing_account: '/accounts',
  consuming_account: '/accounts',
  billing_account: '/accounts',
  joining_member_account: '/accounts',
};

/** The ids a resource names, as `<collection>/<id>` paths with the property that names each. */
export function referencesOf(
  resource: Record<string, unknown>,
  paths: Readonly<Record<string, string>> = REFERENCE_PATHS,
): Array<{ property: string; path: string }> {
  const found: Array<{ property: string; path: string }> = [];
  for (const [property, collection] of Object.entries(paths)) {
    const value = resource[property];
    const ids = Array.isArray(value) ? value : [value];
    for (const id of ids)
      // An empty string is what the other side of a circuit sees for what it may not see.
      if (typeof id === 'string' && id !== '') found.push({ property, path: `${collection}/${id}` });
  }
  return found;
}

/** The table that holds a collection's resources. */
const tableOf = (collection: string) =>
  collection === '/ips' ? 'ip_addresses' : collection.slice(1).replace(/-/g, '_');

/** Whether the resource at `<collection>/<id>` exists at all, whoever may see it. */
async function exists(path: string): Promise<boolean> {
  const slash = path.lastIndexOf('/');
  const rows = await stack().db.sequelize.query<{ n: number }>(
    `SELECT COUNT(*) AS n FROM ${tableOf(path.slice(0, slash))} WHERE id = :id`,
    { replacements: { id: path.slice(slash + 1) }, type: QueryTypes.SELECT },
  );
  return Number(rows[0].n) > 0;
}

/**
 * Reads each resource at `paths` as `token` sees it and follows every id it names. A reference the
 * caller cannot read is `dangling` when it names nothing that exists, `hidden` when it names
 * something that exists but is not the caller's to see (a port back with the exchange, a released
 * address, a private service that no longer admits the caller). A resource that is itself gone
 * (404) names nothing. Answers one line per reference of each kind.
 */
export async function unreadableReferences(
  token: string,
  paths: readonly string[],
  referencePaths: Readonly<Record<string, string>> = REFERENCE_PATHS,
): Promise<{ dangling: string[]; hidden: string[] }> {
  const found = { dangling: [] as string[], hidden: [] as string[] };
  const seen = new Map<string, number>();
  const status = async (path: string) => {
    if (!seen.has(path)) seen.set(path, (await request('GET', path, { token })).status);
    return seen.get(path)!;
  };
  for (const path of paths) {
    const read = await request('GET', path, { token });
    if (read.status === 404) continue;
    if (read.status !== 200) {
      found.dangling.push(`${path}: read ${read.status}`);
      continue;
    }
    for (const reference of referencesOf(read.body as Record<string, unknown>, referencePaths)) {
      const answer = await status(reference.path);
      if (answer === 200) continue;
      const line = `${path} ${reference.property} → ${reference.path}: ${answer}`;
      (answer === 404 && (await exists(reference.path)) ? found.hidden : found.dangling).push(line);
    }
  }
  return found;
}
