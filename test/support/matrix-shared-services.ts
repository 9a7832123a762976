import type { Access } from '../../domain/authority';
import type { MatrixFixture, World } from './matrix';
import { canary, matrixService, owned } from './matrix';
import { stack } from './stack';

/**
 * Network services the unrelated account of the matrix sees without being one of their owners: a
 * public multipoint service (everybody may join it) and a point-to-point circuit whose B side it is.
 * The owner orders both for the sub-account, with sensitive values the onlooker must never read,
 * nor confirm by filtering for them.
 */

/** What a member sees of somebody else's multipoint service. */
const MEMBER_VIEW = [
  'id',
  'type',
  'state',
  'display_name',
  'product_offering',
  'managing_account',
  'consuming_account',
  'billing_account',
  'public',
  'member_joining_rules',
  'network_features',
  'nsc_required_contact_roles',
  'nsc_product_offerings',
];

/** What the B side sees of a circuit: everything but the owner's business (billing zeroed). */
const B_SIDE_VIEW = [
  'id',
  'type',
  'state',
  'status',
  'product_offering',
  'managing_account',
  'consuming_account',
  'billing_account',
  'decommission_at',
  'nsc_required_contact_roles',
  'nsc_product_offerings',
  'joining_member_account',
  'display_name',
  'capacity',
];

/** The owners' access, and the onlooker's: it sees the service in its reduced form. */
const seenByTheUnrelated = (world: World): Record<keyof World['accounts'], Access> => ({
  ...owned(world, 'owner', 'sub-account'),
  unrelated: 'discover',
});

/**
 * Parts of a service: whoever sees it reads its statistics (of its own configs of it), only its
 * owners its cancellation policy; change requests are p2p's.
 */
const partStatus =
  (circuit: boolean) =>
  (part: { method: string; path: string }, access: Access): number | undefined => {
    if (part.path.endsWith('/statistics')) return undefined;
    if (part.path.endsWith('/cancellation-policy')) return access === 'discover' ? 404 : undefined;
    if (part.method === 'POST') return 415;
    // Nothing is open to withdraw or reject; on a circuit the consuming side may do neither.
    return circuit && part.method === 'DELETE' && access === 'read' ? 403 : 404;
  };

export const SHARED_SERVICE_FIXTURES: MatrixFixture[] = [
  {
    kind: 'subject',
    label: 'public multipoint',
    asynchronous: true,
    publicView: MEMBER_VIEW,
    async setup(world) {
      const external = canary('public-service-ref');
      const order = canary('public-service-po');
      const service = await stack().db.networkServices.create({
        ...matrixService(world),
        public: true,
        external_ref: external,
        purchase_order: order,
      });
      return { id: service.id, access: seenByTheUnrelated(world), canaries: [external, order] };
    },
    patchBody: () => ({ type: 'mp2mp_vc', purchase_order: 'matrix patched' }),
    partStatus: partStatus(false),
  },
  {
    kind: 'subject',
    label: 'circuit to the unrelated',
    asynchronous: true,
    publicView: B_SIDE_VIEW,
    async setup(world) {
      const external = canary('circuit-ref');
      const order = canary('circuit-po');
      const service = await stack().db.networkServices.create({
        ...matrixService(world),
        type: 'p2p_vc',
        product_offering: 'po-p2p-vc-ham',
        display_name: 'Matrix circuit',
        joining_member_account: world.accounts.unrelated,
        external_ref: external,
        purchase_order: order,
      });
      return { id: service.id, access: seenByTheUnrelated(world), canaries: [external, order] };
    },
    patchBody: () => ({ type: 'p2p_vc', purchase_order: 'matrix patched' }),
    partStatus: partStatus(true),
  },
];
