import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { sensitiveFiltersOf } from '../../api/sensitive-filters';
import type { Access } from '../../domain/authority';
import { loadSpec, specOperations } from '../../spec';
import type { HttpResponse } from '../support/http';
import { request } from '../support/http';
import { readWhole } from '../support/pages';
import type { AccountIdentity, Identity, MatrixFixture, Subject, World } from '../support/matrix';
import {
  ACCOUNT_IDENTITIES,
  MATRIX_FIXTURES,
  REJECTED_IDENTITIES,
  createWorld,
  multipointOf,
  outsideMember,
} from '../support/matrix';
import { stack } from '../support/stack';
import { QueryTypes } from 'sequelize';
import { SHARED_SERVICE_FIXTURES } from '../support/matrix-shared-services';
import Mocha from 'mocha';
import { settleConnections } from '../support/connections';
import { eventually } from '../support/wait';

/**
 * The authorisation matrix: every resource family the server routes (as it reports them in
 * `GET /implementation`) against every identity, for every operation the family has. Expected
 * outcomes follow from the identity's access to a fresh resource, never from a table written per
 * family; a family without a fixture fails, so new resources join by registering one.
 */

const document = loadSpec();
const AUTH_AND_DISCOVERY = new Set(['auth', 'health', 'implementation']);

type Verb = 'list' | 'read' | 'create' | 'update' | 'partial_update' | 'destroy';

interface Family {
  name: string;
  operations: Partial<Record<Verb, { method: string; path: string }>>;
  /** Operations on a part of one resource (`/connections/{id}/loa`, `…/cancellation-policy`). */
  parts: Array<{ method: string; path: string }>;
}

/** A letter of authorisation, the one kind of body a part of a resource takes. */
const PART_BODY = '%PDF-1.4\n% matrix\n%%EOF\n';

/** Groups operations into families by their first path segment, naming each by what it does. */
function familiesOf(operationIds: readonly string[]): Family[] {
  const byName = new Map<string, Family>();
  for (const op of specOperations(document)) {
    if (!operationIds.includes(op.operationId)) continue;
    const name = op.path.split('/')[1];
    if (AUTH_AND_DISCOVERY.has(name)) continue;
    const family: Family = byName.get(name) ?? { name, operations: {}, parts: [] };
    byName.set(name, family);
    if (/\{id\}\/./.test(op.path)) {
      family.parts.push({ method: op.method.toUpperCase(), path: op.path });
      continue;
    }
    const single = op.path.includes('{id}');
    const verb: Verb | undefined =
      op.method === 'get'
        ? single || name === 'account'
          ? 'read'
          : 'list'
        : op.method === 'post' && !single
          ? 'create'
          : op.method === 'put'
            ? 'update'
            : op.method === 'patch'
              ? 'partial_update'
              : op.method === 'delete'
                ? 'destroy'
                : undefined;
    assert.ok(verb, `no verb for ${op.operationId}`);
    family.operations[verb] = { method: op.method.toUpperCase(), path: op.path };
    byName.set(name, family);
  }
  return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** Everything one identity received in one case, to search for canaries afterwards. */
class Received {
  readonly texts: string[] = [];
  async send(method: string, path: string, token: string | undefined, body?: unknown) {
    const response = await request(
      method,
      path,
      typeof body === 'string'
        ? { token, rawBody: body, headers: { 'content-type': 'application/pdf' } }
        : { token, body },
    );
    this.texts.push(`${method} ${path} → ${response.status}: ${response.text}`);
    return response;
  }
}

/** Every fixture of a family: its own and, for network services, those others see a part of. */
const fixturesOf = (family: string): MatrixFixture[] => [
  ...[MATRIX_FIXTURES[family] ?? []].flat(),
  ...(family === 'network-services' ? SHARED_SERVICE_FIXTURES : []),
];

/** The list operations and sensitive filters the matrix probed with a subject's own value. */
const probed = new Set<string>();

/**
 * A filter on a property the document marks sensitive finds the subject for an identity that sees
 * it whole (managing or consuming it), with exactly its value; never for anybody else, and never
 * with the value in other letter case. The owner tells what the value is.
 */
async function probeSensitiveFilters(
  world: World,
  family: Family,
  subject: Subject,
  identity: AccountIdentity,
) {
  const list = family.operations.list!;
  const operationId = specOperations(document).find(
    (op) => op.path === list.path && op.method === 'get',
  )!.operationId;
  const filters = sensitiveFiltersOf(document, operationId);
  if (!filters.length || !family.operations.read) return;
  const read = family.operations.read.path.replace('{id}', subject.id);
  const whole = (await request('GET', read, { token: world.tokens.owner })).body as Record<string, unknown>;
  const find = subject.find ?? ((items) => items.find((item) => item.id === subject.id));
  const token = world.tokens[identity];
  const access = subject.access[identity];
  for (const filter of filters) {
    const value = whole[filter];
    if (typeof value !== 'string' || value.toUpperCase() === value) continue;
    const finds = async (probe: string) =>
      find(await readWhole(`${list.path}?${filter}=${encodeURIComponent(probe)}`, token)) !== undefined;
    const seesWhole = access === 'change' || access === 'read';
    assert.equal(await finds(value), seesWhole, `${filter}=<its value> for ${identity} (${access})`);
    assert.equal(await finds(value.toUpperCase()), false, `${filter}=<its value in upper case>`);
    probed.add(`${operationId} ${filter}`);
  }
}

const expectStatus = (response: HttpResponse, status: number, what: string) =>
  assert.equal(response.status, status, `${what}: ${response.text.slice(0, 300)}`);

/** The status a change (PUT, PATCH, DELETE) gets from an identity with this access. */
const changeStatus = (access: Access, success: number) =>
  access === 'change' ? success : access === 'none' ? 404 : 403;

async function runSubjectCase(
  world: World,
  family: Family,
  fixture: MatrixFixture,
  identity: AccountIdentity,
  received: Received,
): Promise<Subject> {
  const subject = await fixture.setup!(world);
  const access = subject.access[identity];
  const token = world.tokens[identity];
  const ops = family.operations;
  const path = (template: string) => template.replace('{id}', subject.id);
  const find = subject.find ?? ((items) => items.find((item) => item.id === subject.id));
  const shownAs = (item: Record<string, unknown> | undefined, what: string) => {
    if (access === 'none') {
      assert.equal(item, undefined, `${what}: shown to ${identity}, who may not see it`);
      return;
    }
    assert.ok(item, `${what}: not shown to ${identity}`);
    if (access === 'discover') {
      const extra = Object.keys(item).filter((key) => !(fixture.publicView ?? []).includes(key));
      assert.deepEqual(extra, [], `${what}: more than the public view`);
    }
  };

  if (ops.list) {
    // The whole list: at once, or page by page where the document declares a default page size.
    const listed = await readWhole(ops.list.path, token, (path) => received.send('GET', path, token));
    shownAs(find(listed), 'list');
    await probeSensitiveFilters(world, family, subject, identity);
  }
  if (ops.read) {
    const read = await received.send('GET', path(ops.read.path), token);
    expectStatus(read, access === 'none' ? 404 : 200, 'read');
    if (access !== 'none') shownAs(read.body as Record<string, unknown>, 'read');
  }
  if (ops.create && fixture.createBody) {
    const created = await received.send('POST', ops.create.path, token, await fixture.createBody(world));
    // A create names its owner in the body: only the managing side of the owner may do it.
    const managing = identity === 'owner' || identity === 'reseller';
    expectStatus(created, managing ? 201 : 400, 'create as the owner');
  }
  const changed = fixture.changeStatus ?? (fixture.asynchronous ? 202 : 200);
  for (const part of family.parts) {
    const response = await received.send(
      part.method,
      path(part.path),
      token,
      part.method === 'GET' ? undefined : PART_BODY,
    );
    const expected =
      fixture.partStatus?.(part, access) ??
      (part.method === 'GET' ? (access === 'none' ? 404 : 200) : changeStatus(access, 202));
    expectStatus(response, expected, `${part.method} ${part.path}`);
  }
  if (ops.update && fixture.updateBody) {
    const put = await received.send('PUT', path(ops.update.path), token, fixture.updateBody(world, subject));
    expectStatus(put, changeStatus(access, changed), 'PUT');
  }
  if (ops.partial_update && fixture.patchBody) {
    const patch = await received.send(
      'PATCH',
      path(ops.partial_update.path),
      token,
      fixture.patchBody(world, subject),
    );
    expectStatus(patch, changeStatus(access, changed), 'PATCH');
  }
  if (ops.destroy) {
    const destroyed = await received.send('DELETE', path(ops.destroy.path), token);
    expectStatus(destroyed, changeStatus(access, fixture.asynchronous ? 202 : 200), 'DELETE');
    if (access === 'change' && !fixture.asynchronous) {
      const gone = await received.send('GET', path(ops.read!.path), token);
      expectStatus(gone, 404, 'read after delete');
    }
  }
  return subject;
}

async function runOtherCase(
  world: World,
  family: Family,
  fixture: MatrixFixture,
  identity: Identity,
  received: Received,
) {
  const token = world.tokens[identity];
  const authenticated = (ACCOUNT_IDENTITIES as readonly string[]).includes(identity);
  const ops = family.operations;
  if (fixture.kind === 'self') {
    const own = await received.send('GET', ops.read!.path, token);
    expectStatus(own, authenticated ? 200 : 401, 'own account');
    if (authenticated) assert.equal(own.body.id, world.accounts[identity as AccountIdentity]);
    return;
  }
  const open = fixture.kind === 'open';
  // A resource may move on between the list and the read (a multipoint service from allocated to
  // testing, its status changing with it): then both are asked again, and the last pair must agree.
  for (let attempt = 1; ; attempt += 1) {
    const list = await received.send('GET', ops.list!.path, token);
    expectStatus(list, authenticated || open ? 200 : 401, 'list');
    if (list.status !== 200) return;
    assert.ok(Array.isArray(list.body) && list.body.length > 0, 'the catalogue has items');
    if (!ops.read) return;
    const first = (list.body as Array<{ id: string; state?: unknown }>)[0];
    const read = await received.send('GET', ops.read.path.replace('{id}', first.id), token);
    expectStatus(read, 200, 'read');
    if (!isDeepStrictEqual(read.body, first) && attempt < READ_ATTEMPTS) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    assert.deepEqual(read.body, first);
    return;
  }
}

/** How often a list and a read of its first item are asked when the item moved between them. */
const READ_ATTEMPTS = 5;

async function runCase(world: World, family: Family, fixture: MatrixFixture, identity: Identity) {
  const received = new Received();
  if (fixture.kind !== 'subject') {
    await runOtherCase(world, family, fixture, identity, received);
    return;
  }
  if ((ACCOUNT_IDENTITIES as readonly string[]).includes(identity)) {
    const subject = await runSubjectCase(world, family, fixture, identity as AccountIdentity, received);
    const access = subject.access[identity as AccountIdentity];
    if (access === 'none' || access === 'discover') {
      for (const value of subject.canaries) {
        const leak = received.texts.find((text) => text.includes(value));
        assert.equal(leak, undefined, `a hidden value reached ${identity}: ${leak?.slice(0, 200)}`);
      }
    }
    return;
  }
  // A rejected token gets 401 for every operation, and nothing of the resource.
  const subject = await fixture.setup!(world);
  for (const [verb, op] of Object.entries(family.operations)) {
    const target = op.path.replace('{id}', subject.id);
    const body = ['create', 'update', 'partial_update'].includes(verb) ? {} : undefined;
    const response = await received.send(op.method, target, world.tokens[identity], body);
    expectStatus(response, 401, `${verb} with ${identity}`);
  }
  for (const part of family.parts) {
    const target = part.path.replace('{id}', subject.id);
    const body = part.method === 'GET' ? undefined : PART_BODY;
    expectStatus(
      await received.send(part.method, target, world.tokens[identity], body),
      401,
      `${part.path} with ${identity}`,
    );
  }
  for (const value of subject.canaries) {
    assert.ok(!received.texts.some((text) => text.includes(value)), 'a hidden value leaked');
  }
}

describe('authorisation matrix', function () {
  // Provisioning started here must not change collections under the tests that follow.
  after(() => settleConnections());
  let families: Family[] = [];
  let world: World | undefined;

  // Public services are everybody's to see: the matrix archives its own, so that the collections later
  // tests read (as any account) hold no leftovers of it, in states older schema revisions lack.
  after(async function () {
    this.timeout(60_000);
    if (!world) return;
    const token = world.tokens.owner;
    const listed = await request('GET', `/network-services?managing_account=${world.accounts.owner}`, {
      token,
    });
    for (const { id } of (listed.body as Array<{ id: string; public?: boolean }>).filter((s) => s.public)) {
      await eventually(
        `public service ${id} archived`,
        async () => {
          const { state } = (await request('GET', `/network-services/${id}`, { token })).body as {
            state: string;
          };
          if (state === 'archived') return true;
          // Asked to go, it is cancelled (or decommissioned) by its workflow; asked again, archived.
          await request('DELETE', `/network-services/${id}`, { token });
          return undefined;
        },
        30_000,
        500,
      );
    }
  });

  // The families come from the running server, so the cases are added once it answers: one test
  // per family, fixture and identity.
  before(async function () {
    world = await createWorld();
    const current = world;
    const implementation = await request('GET', '/implementation');
    families = familiesOf(implementation.body.supported_operations as string[]);
    const suite = this.test!.parent!;
    for (const family of families) {
      const fixtures = fixturesOf(family.name);
      for (const fixture of fixtures) {
        for (const identity of [...ACCOUNT_IDENTITIES, ...REJECTED_IDENTITIES] as Identity[]) {
          const label = `${family.name}${fixture.label ? ` (${fixture.label})` : ''} × ${identity}`;
          suite.addTest(new Mocha.Test(label, () => runCase(current, family, fixture, identity)));
        }
      }
    }
  });

  // Every sensitive filter of a family with subjects was tried with a subject's value.
  after(() => {
    const withSubjects = families.filter((family) =>
      fixturesOf(family.name).some((f) => f.kind === 'subject'),
    );
    const lists = withSubjects.flatMap((family) => {
      const list = family.operations.list;
      const op = list && specOperations(document).find((o) => o.path === list.path && o.method === 'get');
      return op
        ? sensitiveFiltersOf(document, op.operationId).map((filter) => `${op.operationId} ${filter}`)
        : [];
    });
    assert.deepEqual(
      lists.filter((pair) => !probed.has(pair)),
      [],
      'no subject had a value to probe these filters with',
    );
  });

  it('has a fixture for every family the server routes', () => {
    const missing = families.filter((family) => !(family.name in MATRIX_FIXTURES)).map((f) => f.name);
    assert.deepEqual(missing, [], 'register a matrix fixture for these families');
    assert.ok(families.length >= 15, `only ${families.length} families found`);
  });
});

/**
 * Who decides who joins a private multipoint service: its managing account, and the accounts that
 * manage that account; never an account that only consumes the service, whatever managing account
 * it writes into a rule. In the world the owner manages the service and the sub-account consumes
 * it; the reseller manages the owner. Each identity creates, changes and deletes a rule it names
 * itself the managing account of, and changes and deletes one the sub-account is named manager of.
 */
describe('who decides who joins a service, as each identity', function () {
  this.timeout(60_000);
  let world: World;
  let service: string;

  before(async () => {
    world = await createWorld();
    service = await multipointOf(world);
  });

  /** A rule on the world's service admitting a fresh outside member, managed (on paper) by `manager`. */
  async function ruleManagedBy(manager: AccountIdentity): Promise<string> {
    const rule = await stack().db.memberJoiningRules.create({
      type: 'allow',
      network_service: service,
      consuming_account: await outsideMember(),
      managing_account: world.accounts[manager],
      external_ref: null,
      capacity_min: null,
      capacity_max: null,
    });
    return rule.id;
  }

  const rulesOf = async () =>
    (
      await stack().db.sequelize.query<{ id: string }>(
        'SELECT id FROM member_joining_rules WHERE network_service = :service ORDER BY id',
        { replacements: { service }, type: QueryTypes.SELECT },
      )
    ).map((row) => row.id);

  /** What each identity gets: created or changed (2xx), forbidden (403), or not its business. */
  const EXPECTED: Record<AccountIdentity, { create: number; change: number; foreign: number }> = {
    owner: { create: 201, change: 200, foreign: 200 },
    reseller: { create: 201, change: 200, foreign: 200 },
    'sub-account': { create: 403, change: 403, foreign: 403 },
    unrelated: { create: 400, change: 404, foreign: 404 },
  };

  for (const identity of ACCOUNT_IDENTITIES)
    it(`${identity}: creates, changes and deletes rules only as the service’s manager`, async () => {
      const token = world.tokens[identity];
      const expected = EXPECTED[identity];
      const before = await rulesOf();
      const created = await request('POST', '/member-joining-rules', {
        token,
        body: {
          type: 'allow',
          network_service: service,
          consuming_account: await outsideMember(),
          managing_account: world.accounts[identity],
        },
      });
      assert.equal(created.status, expected.create, created.text);
      if (expected.create === 201) assert.equal(created.body.network_service, service);
      else {
        assert.deepEqual(await rulesOf(), before, 'a refused rule is not stored');
        if (expected.create === 403) assert.match(created.text, /managing account decides/);
      }

      // A rule the identity itself is named manager of (made by the exchange), then one of the
      // sub-account's: changed and deleted.
      for (const [manager, status] of [
        [identity, expected.change],
        ['sub-account', expected.foreign],
      ] as const) {
        const id = await ruleManagedBy(manager);
        const patched = await request('PATCH', `/member-joining-rules/${id}`, {
          token,
          body: { type: 'allow', capacity_max: 1000 },
        });
        assert.equal(patched.status, status, `PATCH of a rule managed by ${manager}: ${patched.text}`);
        const deleted = await request('DELETE', `/member-joining-rules/${id}`, { token });
        assert.equal(deleted.status, status, `DELETE of a rule managed by ${manager}: ${deleted.text}`);
        assert.equal((await rulesOf()).includes(id), status !== 200, `${id} deleted only when allowed`);
      }
    });
});
