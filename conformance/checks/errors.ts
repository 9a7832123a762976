import type { Refusal } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import { cleanUp } from '../steps/cleanup';
import { contactInRole } from '../steps/contacts';
import { idOf, isItem, show } from '../steps/items';
import { hasProblemType, problemTypeOf } from '../steps/problems';
import { wholeList } from '../steps/whole-lists';

/** Errors are problem documents everywhere, even where no operation matched. */
export const ERROR_CHECKS: CheckDefinition[] = [
  {
    id: 'ERR-001',
    title: 'An unknown path is a 404 problem',
    clause: 'Errors: every error answer is a JSON problem document with an IX-API error type.',
    operations: [],
    safety: 'read',
    async run(t) {
      const response = await t.send({
        method: 'GET',
        path: '/conformance-no-such-path',
        token: await t.token(),
      });
      t.must(response.status === 404, `answered ${response.status}, not 404`);
      const problems = t.suite.problemDocumentProblems(response);
      t.must(problems.length === 0, problems.join('; '));
    },
  },
  {
    id: 'ERR-002',
    title: 'A body that is not JSON is a 400 problem',
    clause: 'Errors: a request body that cannot be parsed answers 400 validation-error.',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.call('auth_token_create', {
        role: null,
        rawBody: '{"api_key": ',
        headers: { 'content-type': 'application/json' },
      });
      t.must(response.status === 400, `answered ${response.status}, not 400`);
    },
  },
  {
    id: 'ERR-003',
    title: 'A wrong method on a known path is a problem, not a bare error page',
    clause: 'Errors: clients decode every error body as a problem; 405 with Allow is the expected answer.',
    operations: ['api_implementation_read'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.send({ method: 'DELETE', path: '/implementation', token: await t.token() });
      t.must(response.status >= 400 && response.status < 500, `answered ${response.status}`);
      const problems = t.suite.problemDocumentProblems(response);
      t.must(problems.length === 0, problems.join('; '));
      t.should(response.status === 405, `answered ${response.status}; 405 says what happened`);
    },
  },
  {
    id: 'EXT-001',
    title: "GET /extensions lists the implementation's extensions",
    clause: 'Extensions: the list of extensions is readable and each entry matches the schema.',
    operations: ['api_extensions_list'],
    safety: 'read',
    async run(t) {
      await wholeList(t, 'api_extensions_list', { role: null });
    },
  },
];

/**
 * What is wrong with the `properties` of a 400 problem, which IX-API says every 400 carries: a
 * non-empty list of failed validations, each naming a property (`name`) and saying why (`reason`).
 */
export function propertiesProblems(body: unknown): string[] {
  if (!isItem(body)) return ['it is no JSON object'];
  const { properties } = body;
  if (properties === undefined) return ['it carries no properties'];
  if (!Array.isArray(properties)) return [`its properties is ${show(properties)}, not a list`];
  if (!properties.length) return ['its properties list is empty'];
  const unnamed = properties.filter(
    (property) =>
      !isItem(property) ||
      typeof property.name !== 'string' ||
      !property.name ||
      typeof property.reason !== 'string' ||
      !property.reason,
  );
  return unnamed.length
    ? [`${unnamed.length} of its properties lack a name or a reason (${show(unnamed[0])})`]
    : [];
}

/** The problem type of an answer, by its IX-API name (`unable-to-fulfill`), or what it said. */
const typeName = (body: unknown): string => {
  const type = isItem(body) ? body.type : undefined;
  return typeof type === 'string' ? (/\/([a-z-]+)\.html$/.exec(type)?.[1] ?? type) : 'no problem type';
};

const where = (refusal: Refusal) =>
  `${refusal.exchange.request.method} ${refusal.exchange.request.url.replace(/^https?:\/\/[^/]+/, '')}`;

/** Lists at most a few of the requests a finding is about. */
function some(refusals: readonly Refusal[]): string {
  const named = refusals.slice(0, 3).map(where).join('; ');
  return refusals.length > 3 ? `${named}; and ${refusals.length - 3} more` : named;
}

/** Refused answers a result shows as its evidence; the rest are counted. */
const SHOWN = 5;

/**
 * Provokes an unable-to-fulfill the full profile can without touching anything but its own: a
 * contact of the suite's own given a role it holds already.
 */
async function duplicateAssignment(t: CheckContext): Promise<void> {
  const { contact, role } = await contactInRole(t);
  const twin = t.suite.ledger.intend({
    destroy: 'role_assignments_destroy',
    role: 'primary',
    marker: `${contact}-twin`,
    find: { list: 'role_assignments_list', query: `contact=${encodeURIComponent(contact)}` },
  });
  const body = { contact, role };
  const response = await t.call('role_assignments_create', { body });
  const created = idOf(response.body);
  if (response.status < 300 && created !== undefined) {
    t.suite.ledger.created(twin, created);
    t.inconclusive(
      `the exchange gave contact ${contact} the role ${role} a second time (${response.status}); no unable-to-fulfill could be provoked`,
    );
  }
  t.suite.ledger.removed(twin);
  const what = `a second assignment of role ${role} to contact ${contact}`;
  if (!t.must(response.status === 400, `${what} answered ${response.status}, not 400`)) return;
  for (const problem of propertiesProblems(response.body))
    t.must(false, `the 400 (${problemTypeOf(response)}) for ${what}: ${problem}`);
  const names = (
    isItem(response.body) && Array.isArray(response.body.properties) ? response.body.properties : []
  )
    .map((property) => (isItem(property) ? property.name : undefined))
    .filter((name): name is string => typeof name === 'string');
  if (names.length)
    t.should(
      names.some((name) => name in body || name === 'id'),
      `the properties of the 400 for ${what} name ${names.join(', ')}, none of which the request sent (${Object.keys(body).join(', ')})`,
    );
  if (!hasProblemType(response, 'unable-to-fulfill'))
    t.inconclusive(
      `${what} was refused as ${problemTypeOf(response)}; its properties were judged, but no unable-to-fulfill was provoked`,
    );
}

/** A refusal the full profile provokes: an unable-to-fulfill carries properties besides conflicts. */
export const REFUSAL_CHECKS: CheckDefinition[] = [
  {
    id: 'ERR-004',
    title: 'A request the exchange cannot fulfil is refused with properties naming what to change',
    clause:
      "Errors: a 400 carries properties, the failed validations, each naming a property and why; an unable-to-fulfill (here: a contact of the suite's own given a role it holds already) carries them besides its conflicts, and should name a property the request sent (or the path's id). INCONCLUSIVE when the exchange gives a contact the same role twice, or refuses it as another problem type (whose properties are judged all the same).",
    operations: ['role_assignments_create'],
    requires: [
      'roles_list',
      'contacts_create',
      'contacts_destroy',
      'contacts_list',
      'role_assignments_create',
      'role_assignments_destroy',
    ],
    safety: 'mutate',
    async run(t) {
      try {
        await duplicateAssignment(t);
      } finally {
        await cleanUp(t);
      }
    },
  },
];

/** Judged from every 400 the run met; registered last but for the rate limits. */
export const PROPERTIES_CHECKS: CheckDefinition[] = [
  {
    id: 'ERR-005',
    title: 'Every 400 the run met carries properties naming what failed',
    clause:
      'Errors: a 400 answer carries properties, a non-empty list of the failed validations, each naming a property (name) and saying why (reason), whatever its problem type: a validation-error, an unable-to-fulfill besides its conflicts, a cancellation-policy-error besides its days (which should name decommission_at). Judged from every 400 the run met; INCONCLUSIVE when it met none.',
    operations: [],
    safety: 'read',
    run(t) {
      const refusals = t.suite.http.refusals;
      if (!refusals.length)
        t.inconclusive('the server answered no request of this run with 400, so there was none to judge');
      const broken = new Map<string, Refusal[]>();
      const unnamedDay: Refusal[] = [];
      for (const refusal of refusals) {
        for (const problem of propertiesProblems(refusal.body)) {
          const key = `${typeName(refusal.body)}: ${problem}`;
          broken.set(key, [...(broken.get(key) ?? []), refusal]);
        }
        const body = refusal.body;
        if (
          typeName(body) === 'cancellation-policy-error' &&
          isItem(body) &&
          Array.isArray(body.properties) &&
          !body.properties.some((property) => isItem(property) && property.name === 'decommission_at')
        )
          unnamedDay.push(refusal);
      }
      const shown = new Set<Refusal>();
      for (const [problem, answers] of broken) {
        t.must(false, `${answers.length} of ${refusals.length} 400 answers (${problem}): ${some(answers)}`);
        answers.slice(0, 2).forEach((refusal) => shown.add(refusal));
      }
      t.should(
        !unnamedDay.length,
        `${unnamedDay.length} cancellation-policy-error answers do not name decommission_at among their properties: ${some(unnamedDay)}`,
      );
      unnamedDay.slice(0, 2).forEach((refusal) => shown.add(refusal));
      // The broken answers first, then as many others as the report shows.
      for (const refusal of refusals) if (shown.size < SHOWN) shown.add(refusal);
      t.evidence.push(...[...shown].slice(0, SHOWN).map((refusal) => refusal.exchange));
      return Promise.resolve();
    },
  },
];
