import type { CheckContext, CheckDefinition } from '../runner';
import { change } from '../steps/changes';
import {
  bandwidthStep,
  capacities,
  circuitTo,
  CONFIG_CREATE,
  finish,
  liveConnections,
  offeringOf,
  ORDERING_SERVICES,
  ORDERING_VC_CONFIGS,
  orderVcConfig,
  PATCH,
  placed,
  REQUEST_CREATE,
  REQUEST_DESTROY,
  REQUEST_READ,
  secondAccount,
  serviceOfferings,
  SERVICES,
} from '../steps/circuit-orders';
import type { Item } from '../steps/items';
import { current, isItem, show } from '../steps/items';
import { hasProblemType, problemTypeOf, validationRefusal } from '../steps/problems';
import { waitFor } from '../steps/waiting';
import type { Role } from '../suite';

/** Change requests: the B side of a point-to-point circuit asks, the owner answers. */

export const EARLY_REQUEST_CHECK: CheckDefinition = {
  id: 'CR-001',
  title: 'A change request is asked for by the B side of a circuit in production only',
  clause:
    "Change requests: a circuit without an open request answers 404 to GET and DELETE of …/change-request; a request from the A side (the circuit's owner, who changes it directly) is a 403 permission-denied; one from the B side before the circuit is in production is a 400 unable-to-fulfill; neither opens a request nor puts the circuit in production_change_pending.",
  operations: [REQUEST_READ, REQUEST_CREATE, REQUEST_DESTROY],
  requires: [...ORDERING_SERVICES, REQUEST_READ, REQUEST_CREATE, REQUEST_DESTROY],
  safety: 'mutate',
  deadlineMs: 90_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a circuit needs a B side');
      const offering = await offeringOf(t, 'p2p_vc');
      const step = bandwidthStep(offering);
      const { id } = await circuitTo(t, secondary, offering, step ? { capacity: step.from } : {});
      const asked = { product_offering: offering.id, capacity: step?.to ?? capacities(offering).min };
      for (const role of ['primary', 'secondary'] as const) {
        const none = await t.call(REQUEST_READ, { id, role });
        t.must(
          none.status === 404,
          `circuit ${id} has no change request, yet GET answered ${none.status} to the ${role} account, not 404`,
        );
      }
      const fromA = await t.call(REQUEST_CREATE, { id, body: asked });
      if (
        t.must(
          fromA.status === 403,
          `a change request of circuit ${id} from its A side answered ${fromA.status}, not 403`,
        )
      )
        t.must(
          hasProblemType(fromA, 'permission-denied'),
          `the A side's change request was refused as ${problemTypeOf(fromA)}, not permission-denied`,
        );
      const early = await current(t, SERVICES, id);
      if (early?.state === 'production')
        t.inconclusive(
          `circuit ${id} reached production without its ends; a request before production cannot be tried`,
        );
      const fromB = await t.call(REQUEST_CREATE, { id, role: 'secondary', body: asked });
      if (
        t.must(
          fromB.status === 400,
          `a change request of circuit ${id} (${show(early?.state)}) from its B side answered ${fromB.status}, not 400`,
        )
      )
        t.must(
          hasProblemType(fromB, 'unable-to-fulfill'),
          `the B side's change request before production was refused as ${problemTypeOf(fromB)}, not unable-to-fulfill`,
        );
      const withdrawn = await t.call(REQUEST_DESTROY, { id, role: 'secondary' });
      t.must(
        withdrawn.status === 404,
        `DELETE of the change request of circuit ${id}, which has none, answered ${withdrawn.status}, not 404`,
      );
      const after = await current(t, SERVICES, id);
      t.must(
        !after || after.state !== 'production_change_pending',
        `circuit ${id} is production_change_pending after change requests that were refused`,
      );
      const still = await t.call(REQUEST_READ, { id });
      t.must(
        still.status === 404,
        `after refused change requests GET of circuit ${id}'s answered ${still.status}, not 404`,
      );
    } finally {
      await finish(t);
    }
  },
};

// ---------------------------------------------------------------------------------------------
// Configs of virtual circuits
// ---------------------------------------------------------------------------------------------

/** Asks for a change as `role` and holds a 202 to it, with the request answered. */
async function askChange(t: CheckContext, id: string, body: Item): Promise<boolean> {
  const response = await t.call(REQUEST_CREATE, { id, role: 'secondary', body });
  if (
    !t.must(
      response.status === 202,
      `the B side's change request of circuit ${id} answered ${response.status}, not 202: ${response.text.slice(0, 200)}`,
    )
  )
    return false;
  const answered = isItem(response.body) ? response.body : {};
  t.must(
    answered.product_offering === body.product_offering && answered.capacity === body.capacity,
    `the change request of circuit ${id} asking for ${show(body)} is answered as ${show(answered)}`,
  );
  return true;
}

/** The open change request as `role` reads it: 200 (or 202, as IX-API 2.1 had it) with it. */
async function openRequest(t: CheckContext, id: string, role: Role, body: Item): Promise<void> {
  const read = await t.call(REQUEST_READ, { id, role });
  if (
    t.must(
      [200, 202].includes(read.status),
      `GET of circuit ${id}'s open change request answered ${read.status} to the ${role} account`,
    )
  )
    t.must(
      isItem(read.body) &&
        read.body.capacity === body.capacity &&
        read.body.product_offering === body.product_offering,
      `the ${role} account reads circuit ${id}'s change request as ${show(read.body)}, not ${show(body)}`,
    );
}

async function stateOf(t: CheckContext, id: string, state: string): Promise<boolean> {
  return Boolean(await waitFor(t, SERVICES.read, id, (read) => read.state === state, t.suite.waits.settling));
}

export const CHANGE_CHECK: CheckDefinition = {
  id: 'CR-002',
  title: 'The B side of a circuit in production asks for a change, which the A side rejects or carries out',
  clause:
    "Change requests: on a circuit in production (both ends' p2p_vc configs in production), the B side's request for a capacity outside the offering's range is a 400 validation-error naming capacity, for an offering of another kind one naming product_offering; a valid request answers 202 with it, the circuit goes to production_change_pending and both sides read the request; a second request is a 400 unable-to-fulfill; the A side's DELETE rejects it (202 with the request) and the B side's withdraws it, each leaving no request (404) and the circuit back in production; the A side accepts one by a PATCH of the circuit with the capacity asked for (202), after which the circuit has it, is in production and has no open request. INCONCLUSIVE when the two accounts have no connections in production where a p2p_vc offering hands over, or the circuit does not reach production.",
  operations: [REQUEST_CREATE, REQUEST_READ, REQUEST_DESTROY, PATCH, CONFIG_CREATE],
  requires: [
    ...ORDERING_SERVICES,
    ...ORDERING_VC_CONFIGS,
    REQUEST_CREATE,
    REQUEST_READ,
    REQUEST_DESTROY,
    PATCH,
  ],
  safety: 'mutate',
  deadlineMs: 180_000,
  async run(t) {
    try {
      const secondary = await secondAccount(t, 'a circuit needs a B side');
      const theirs = await liveConnections(t, 'secondary');
      const { offering, connection: own } = await placed(t, 'p2p_vc', (candidate) =>
        theirs.has(String(candidate.service_metro_area_network)),
      );
      const connection = theirs.get(String(offering.service_metro_area_network))!;
      const range = capacities(offering);
      const step =
        bandwidthStep(offering) ??
        t.inconclusive(
          `${String(offering.id)} allows neither upgrades nor downgrades; no change can be asked for`,
        );
      const { service, id } = await circuitTo(t, secondary, offering, { capacity: step.from });
      await orderVcConfig(t, 'primary', service, own);
      const seen = await t.call(SERVICES.read, { id, role: 'secondary' });
      await orderVcConfig(t, 'secondary', seen.status === 200 ? (seen.body as Item) : service, connection);
      const live = await waitFor(
        t,
        SERVICES.read,
        id,
        (read) => read.state === 'production',
        t.suite.waits.provisioning * 2,
      );
      if (!live)
        t.inconclusive(
          `circuit ${id} did not reach production within ${(t.suite.waits.provisioning * 2) / 1000} s of its ends`,
        );

      const max = offering.bandwidth_max;
      if (typeof max === 'number' && max > 0) {
        const over = await t.call(REQUEST_CREATE, {
          id,
          role: 'secondary',
          body: { product_offering: offering.id, capacity: max + 1 },
        });
        validationRefusal(
          t,
          over,
          ['capacity'],
          `a change request of circuit ${id} for ${max + 1} Mbit/s, above ${String(offering.id)}'s ${max}`,
        );
      }
      const elsewhere = (await serviceOfferings(t, 'mp2mp_vc'))[0];
      if (elsewhere) {
        const other = await t.call(REQUEST_CREATE, {
          id,
          role: 'secondary',
          body: { product_offering: elsewhere.id, capacity: range.min },
        });
        validationRefusal(
          t,
          other,
          ['product_offering'],
          `a change request of circuit ${id} for the mp2mp_vc offering ${String(elsewhere.id)}`,
        );
      }
      t.must(
        await stateOf(t, id, 'production'),
        `circuit ${id} left production after refused change requests`,
      );

      const asked: Item = { product_offering: offering.id, capacity: step.to };
      // Rejected by the A side.
      if (await askChange(t, id, asked)) {
        t.must(
          await stateOf(t, id, 'production_change_pending'),
          `circuit ${id} is not production_change_pending with a change request open`,
        );
        await openRequest(t, id, 'primary', asked);
        await openRequest(t, id, 'secondary', asked);
        const twin = await t.call(REQUEST_CREATE, {
          id,
          role: 'secondary',
          body: asked,
        });
        if (
          t.must(
            twin.status === 400,
            `a second change request of circuit ${id} answered ${twin.status}, not 400`,
          )
        )
          t.must(
            hasProblemType(twin, 'unable-to-fulfill'),
            `a second change request was refused as ${problemTypeOf(twin)}, not unable-to-fulfill`,
          );
        const rejected = await t.call(REQUEST_DESTROY, { id });
        t.must(
          rejected.status === 202,
          `the A side's DELETE of circuit ${id}'s change request answered ${rejected.status}, not 202`,
        );
        t.must(
          await stateOf(t, id, 'production'),
          `circuit ${id} did not come back to production once its change request was rejected`,
        );
        const none = await t.call(REQUEST_READ, { id });
        t.must(
          none.status === 404,
          `a rejected change request of circuit ${id} still answers ${none.status}`,
        );
      }
      // Withdrawn by the B side.
      if (await askChange(t, id, asked)) {
        const withdrawn = await t.call(REQUEST_DESTROY, { id, role: 'secondary' });
        t.must(
          withdrawn.status === 202,
          `the B side's DELETE of circuit ${id}'s change request answered ${withdrawn.status}, not 202`,
        );
        t.must(
          await stateOf(t, id, 'production'),
          `circuit ${id} did not come back to production once its change request was withdrawn`,
        );
        const none = await t.call(REQUEST_READ, { id, role: 'secondary' });
        t.must(
          none.status === 404,
          `a withdrawn change request of circuit ${id} still answers ${none.status}`,
        );
      }
      // Accepted by the A side.
      if (await askChange(t, id, asked)) {
        await change(t, SERVICES, PATCH, id, { type: 'p2p_vc', capacity: step.to }, ['capacity']);
        t.must(
          await stateOf(t, id, 'production'),
          `circuit ${id} is not back in production once its change was carried out`,
        );
        const none = await t.call(REQUEST_READ, { id });
        t.must(
          none.status === 404,
          `the change request of circuit ${id} is still open (${none.status}) once carried out`,
        );
      }
    } finally {
      await finish(t);
    }
  },
};
