import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { HttpResponse } from '../http';
import type { CheckContext, CheckDefinition } from '../runner';
import { change, refusedChange, untypedChange } from '../steps/changes';
import {
  finish,
  ORDERING_SERVICES,
  orderService,
  ownOrder,
  serviceOfferings,
  SERVICES,
} from '../steps/circuit-orders';
import { cleanUp } from '../steps/cleanup';
import type { Item } from '../steps/items';
import { idOf, isItem, newMarker, show } from '../steps/items';
import { problemTypeOf } from '../steps/problems';
import { wholeCollection } from '../steps/whole-lists';

/**
 * What the public IX-API clients rely on (the Terraform provider ixapi and pyixapi, which Peering
 * Manager uses): request forms they send that a server must take, and answers they parse. Each
 * check names the client behaviour it holds the server to.
 */

const UNKNOWN_ID = 'conformance-no-such-id';

/** DELETE bodies the Terraform provider sends, by the operation it sends them to. */
const CLIENT_DELETES: ReadonlyArray<{ operation: string; body: string; sender: string }> = [
  { operation: 'network_service_configs_destroy', body: 'null', sender: 'the Terraform provider' },
  { operation: 'port_reservations_destroy', body: 'null', sender: 'the Terraform provider' },
  { operation: 'network_services_destroy', body: '{}', sender: 'the Terraform provider' },
  // Clients that always label their requests JSON send the label with no body at all.
  { operation: 'network_service_configs_destroy', body: '', sender: 'clients labelling every request JSON' },
];

const JSON_TYPE = { 'content-type': 'application/json' };

/** The body as a finding names it. */
const named = (body: string) => (body ? `the JSON body ${body}` : 'an empty body labelled application/json');

/** A path for findings, below the base URL. */
const pathOf = (t: CheckContext, response: HttpResponse) => response.url.replace(t.suite.http.baseUrl, '');

/** What a refusal said, for a finding. */
const refusal = (response: HttpResponse) =>
  response.status >= 400 ? ` (${problemTypeOf(response)}: ${response.text.slice(0, 160)})` : '';

/** The claims of a JWT, or undefined for anything else. */
function claimsOf(token: unknown): { exp?: number; iat?: number } | undefined {
  try {
    return typeof token === 'string' ? decodeJwt(token) : undefined;
  } catch {
    return undefined;
  }
}

/** A token the server refuses: the primary account's access token with its claims changed. */
async function staleToken(t: CheckContext): Promise<string> {
  const parts = (await t.token()).split('.');
  if (parts.length !== 3) return 'conformance-not-a-token';
  const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString()) as Item;
  const expired = Buffer.from(JSON.stringify({ ...claims, exp: 1_000_000_000 })).toString('base64url');
  return `${parts[0]}.${expired}.${parts[2]}`;
}

/** A token pair of the primary account, or undefined when logging in answered none. */
async function login(
  t: CheckContext,
  headers?: Record<string, string>,
): Promise<{ response: HttpResponse; pair?: { access: string; refresh: string } }> {
  const credentials = t.suite.options.credentials.primary;
  const response = await t.call('auth_token_create', { role: null, body: credentials, headers });
  const body = isItem(response.body) ? response.body : {};
  return response.status === 201 &&
    typeof body.access_token === 'string' &&
    typeof body.refresh_token === 'string'
    ? { response, pair: { access: body.access_token, refresh: body.refresh_token } }
    : { response };
}

/** An authenticated GET the server declares, to try tokens and headers on. */
function probeOperation(t: CheckContext): string {
  const probe = ['account_read', 'accounts_list', 'facilities_list'].find((id) => t.suite.isDeclared(id));
  return probe ?? t.inconclusive('the server declares none of account_read, accounts_list, facilities_list');
}

/** Collections whose ids clients put into paths: everything a customer reads or manages. */
const ID_COLLECTIONS = [
  'accounts_list',
  'contacts_list',
  'roles_list',
  'role_assignments_list',
  'connections_list',
  'port_reservations_list',
  'ports_list',
  'network_services_list',
  'network_service_configs_list',
  'network_features_list',
  'network_feature_configs_list',
  'member_joining_rules_list',
  'macs_list',
  'ips_list',
  'product_offerings_list',
  'facilities_list',
  'devices_list',
  'pops_list',
  'metro_areas_list',
  'metro_area_networks_list',
  'availability_zones_list',
];

/** Characters a client may put into a path segment as they are (RFC 3986 unreserved, and `:`). */
const URL_SAFE = /^[A-Za-z0-9._~:-]+$/;

/** The pattern the document gives the `id` path parameter, if it gives one. */
function idPattern(t: CheckContext): string | undefined {
  const parameters = t.suite.document.components.parameters as
    Record<string, { schema?: { pattern?: unknown } }> | undefined;
  const pattern = parameters?.ResourceId?.schema?.pattern;
  return typeof pattern === 'string' ? pattern : undefined;
}

/** Checks of the read profile: safe against production. */
export const CLIENT_READ_CHECKS: CheckDefinition[] = [
  {
    id: 'CLIENT-001',
    title: 'A DELETE with a JSON null, {} or empty body is taken like one without a body',
    clause:
      'Clients: the Terraform provider sends DELETE with the literal JSON body null (network service configs, port reservations) and with {} (network services), labelled application/json, and clients labelling every request JSON send the label with no body; each is taken like a DELETE without a body. A DELETE of an id that does not exist still answers 404 with a problem, not 400 or 415 for its body.',
    operations: CLIENT_DELETES.map((entry) => entry.operation).filter(
      (operation, index, all) => all.indexOf(operation) === index,
    ),
    requires: [],
    safety: 'read',
    async run(t) {
      const sent = CLIENT_DELETES.filter((entry) => t.suite.isDeclared(entry.operation));
      if (!sent.length)
        t.notApplicable(
          'the server declares none of network_service_configs_destroy, port_reservations_destroy, network_services_destroy',
        );
      for (const { operation, body, sender } of sent) {
        const response = await t.call(operation, { id: UNKNOWN_ID, rawBody: body, headers: JSON_TYPE });
        const what = `DELETE ${pathOf(t, response)} with ${named(body)} (as ${sender} sends it)`;
        t.must(
          response.status === 404,
          `${what} answered ${response.status}, not 404${[400, 415].includes(response.status) ? ': the body was refused' : ''}${refusal(response)}`,
        );
      }
    },
  },
  {
    id: 'CLIENT-002',
    title: 'An external_ref nobody has lists no account: 200 with []',
    clause:
      'Clients: the Terraform provider checks its credentials with GET /accounts?external_ref=<random> and expects 200 with an empty JSON array; a filter that matches nothing is an empty list, not a 404.',
    operations: ['accounts_list'],
    safety: 'read',
    async run(t) {
      const ref = `conformance-nobody-${randomBytes(6).toString('hex')}`;
      const response = await t.call('accounts_list', { query: `external_ref=${ref}` });
      const what = `GET /accounts?external_ref=${ref}, a reference no account has,`;
      t.must(response.status === 200, `${what} answered ${response.status}, not 200${refusal(response)}`);
      if (response.status === 200)
        t.must(
          Array.isArray(response.body) && response.body.length === 0,
          `${what} answered ${response.text.slice(0, 160)}, not []`,
        );
    },
  },
  {
    id: 'CLIENT-003',
    title: 'GET /health gives version as a string holding the API major version',
    clause:
      'Clients: pyixapi reads GET /health and calls int(body["version"]) to pick the API major version, falling back to the v1 paths on any answer but a 2xx; Peering Manager shows its status. The document answers a healthy (pass) or degraded (warn) service with 200 and a failing one with 503; the specification has implementations report version and releaseId there, version a string (Versioning). version must be present as a string; that it holds an integer, as the API health-check draft has it (the public, major version) and clients parse it, is a SHOULD, and so is releaseId. NOT_APPLICABLE where the server neither declares api_health_read nor answers GET /health.',
    operations: ['api_health_read'],
    requires: [],
    safety: 'read',
    async run(t) {
      const response = await t.send({ method: 'GET', path: t.path('api_health_read') });
      if (!t.suite.isDeclared('api_health_read') && [404, 501].includes(response.status))
        t.notApplicable(
          `the server does not declare api_health_read and GET /health answered ${response.status}`,
        );
      t.contract('api_health_read', response);
      const body = isItem(response.body) ? response.body : {};
      const { status, version } = body;
      if (status === 'pass' || status === 'warn')
        t.must(
          response.status === 200,
          `GET /health reports status ${show(status)} but answered ${response.status}, not 200: pyixapi falls back to the IX-API v1 paths on it`,
        );
      if (!t.must(version !== undefined, 'GET /health gives no version: pyixapi reads int(body["version"])'))
        return;
      if (!t.must(typeof version === 'string', `GET /health gives version ${show(version)}, not a string`))
        return;
      t.should(
        /^\s*\d+\s*$/.test(String(version)),
        `GET /health gives version ${show(version)}, which int() cannot read: pyixapi takes the API major version from it (the release belongs in releaseId)`,
      );
      t.should(
        typeof body.releaseId === 'string' && body.releaseId.length > 0,
        `GET /health gives no releaseId (${show(body.releaseId)}); the specification has implementations report their release there`,
      );
    },
  },
  {
    id: 'CLIENT-004',
    title:
      'A refresh token sent as Authorization: Bearer as well refreshes; the auth operations ignore that header',
    clause:
      'Clients: pyixapi calls POST /auth/refresh with {"refresh_token": …} in the body and the same refresh token as Authorization: Bearer; it is answered 201 with a new access and refresh token, the access token working. The two authentication operations require no credentials, so they ignore any Authorization header: POST /auth/token carrying one the server refuses (an expired token) still answers 201.',
    operations: ['auth_token_refresh', 'auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      // Logging in with a stale token in the header gives the pair to refresh (refresh tokens may be
      // good for one use only, so the session's is not used).
      const stale = await login(t, { authorization: `Bearer ${await staleToken(t)}` });
      t.must(
        stale.response.status === 201,
        `POST /auth/token with valid credentials and an expired token as Authorization: Bearer answered ${stale.response.status}, not 201${refusal(stale.response)}`,
      );
      const pair =
        stale.pair ??
        (await login(t)).pair ??
        t.inconclusive('logging in as the primary account gave no token pair (AUTH-001 judges that)');
      const refreshed = await t.call('auth_token_refresh', {
        role: null,
        body: { refresh_token: pair.refresh },
        headers: { authorization: `Bearer ${pair.refresh}` },
      });
      const what = 'POST /auth/refresh with the refresh token in the body and as Authorization: Bearer';
      if (
        t.must(refreshed.status === 201, `${what} answered ${refreshed.status}, not 201${refusal(refreshed)}`)
      ) {
        const body = isItem(refreshed.body) ? refreshed.body : {};
        t.must(
          typeof body.access_token === 'string' && typeof body.refresh_token === 'string',
          `${what} answered no new access_token and refresh_token`,
        );
        if (typeof body.access_token === 'string') {
          const operation = probeOperation(t);
          const probe = await t.send({
            method: 'GET',
            path: t.path(operation, { id: (await t.session()).accountId ?? UNKNOWN_ID }),
            token: body.access_token,
          });
          t.must(
            probe.status === 200,
            `the access token of that refresh was refused by ${operation} (${probe.status})`,
          );
        }
      }
    },
  },
  {
    id: 'CLIENT-005',
    title: 'Content-Type and Accept with a stray ";" or a charset are taken',
    clause:
      'Clients: pyixapi sends Content-Type: application/json; (a trailing semicolon, which RFC 9110 media-type syntax allows: parameters may be empty) on POST and PUT, and accept: application/json; on GET; others send application/json; charset=utf-8. POST /auth/token with valid credentials under either Content-Type answers 201, and a GET with that Accept answers 200 (not 415 or 406).',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const credentials = JSON.stringify(t.suite.options.credentials.primary);
      for (const contentType of ['application/json;', 'application/json; charset=utf-8']) {
        const response = await t.call('auth_token_create', {
          role: null,
          rawBody: credentials,
          headers: { 'content-type': contentType },
        });
        t.must(
          response.status === 201,
          `POST /auth/token with valid credentials as Content-Type: ${contentType} answered ${response.status}, not 201${refusal(response)}`,
        );
      }
      const operation = probeOperation(t);
      const response = await t.send({
        method: 'GET',
        path: t.path(operation, { id: (await t.session()).accountId ?? UNKNOWN_ID }),
        token: await t.token(),
        headers: { accept: 'application/json;' },
      });
      t.contract(operation, response);
      t.must(
        response.status === 200,
        `GET ${pathOf(t, response)} with accept: application/json; answered ${response.status}, not 200${refusal(response)}`,
      );
    },
  },
  {
    id: 'CLIENT-006',
    title: 'An access token lasts an hour or more',
    clause:
      'Clients: the Terraform provider logs in once per run and never refreshes, so an access token should outlast a long terraform apply: one hour or more from when it is issued (exp less iat, or less the time of issue). The specification leaves the lifetime open: a shorter one is a warning. INCONCLUSIVE when the access token is not a JWT with exp (AUTH-001 judges that).',
    operations: ['auth_token_create'],
    requires: [],
    safety: 'read',
    async run(t) {
      const issued = Math.floor(Date.now() / 1000);
      const token = (await t.session()).accessToken;
      const claims = claimsOf(token);
      const exp =
        typeof claims?.exp === 'number'
          ? claims.exp
          : t.inconclusive(
              'the access token is not a JWT with exp (AUTH-001 judges that); its lifetime cannot be read',
            );
      // Without iat the time of issue is unknown: from now is the shortest it may have been given.
      const lifetime = exp - (typeof claims?.iat === 'number' ? claims.iat : issued);
      t.should(
        lifetime >= 3600,
        `the access token lasts ${lifetime} s; the Terraform provider never refreshes, so a terraform apply longer than that fails`,
      );
    },
  },
  {
    id: 'CLIENT-007',
    title: 'Ids are URL-safe',
    clause:
      "Clients: the Terraform provider puts ids into URL paths unescaped, so ids should hold only characters a path segment carries as they are (letters, digits, -, _, :, and the other RFC 3986 unreserved . and ~); the document's id path parameter takes only its pattern. The specification only limits an id's length: others are a warning. Judged on every collection the server declares of those a customer reads or manages; INCONCLUSIVE when they hold nothing.",
    operations: ID_COLLECTIONS,
    requires: [],
    safety: 'read',
    deadlineMs: 120_000,
    async run(t) {
      const lists = ID_COLLECTIONS.filter((id) => t.suite.operations.has(id) && t.suite.isDeclared(id));
      if (!lists.length) t.notApplicable(`the server declares none of ${ID_COLLECTIONS.join(', ')}`);
      const pattern = idPattern(t);
      const documented = pattern ? new RegExp(pattern) : undefined;
      let seen = 0;
      for (const list of lists) {
        const ids = (await wholeCollection(t, list)).map((item) => item.id).filter((id) => id !== undefined);
        seen += ids.length;
        const unsafe = ids.filter(
          (id) =>
            typeof id !== 'string' ||
            !URL_SAFE.test(id) ||
            id === '.' ||
            id === '..' ||
            (documented !== undefined && !documented.test(id)),
        );
        t.should(
          !unsafe.length,
          `${unsafe.length} of the ${ids.length} ids of ${t.suite.operation(list).path} are not URL-safe${pattern ? ` (or outside the document's ${pattern})` : ''}: ${unsafe
            .slice(0, 3)
            .map(show)
            .join(', ')}`,
        );
      }
      if (!seen) t.inconclusive(`${lists.length} collections hold no item whose id could be judged`);
    },
  },
];

const CONTACT_FIELDS = { name: 'Conformance client' };

/** A contact of the primary account's own, written into the ledger first; its id. */
async function ownContact(t: CheckContext): Promise<string> {
  const account =
    (await t.session()).accountId ?? t.inconclusive('the primary token does not name its account');
  const marker = newMarker();
  const seq = t.suite.ledger.intend({
    destroy: 'contacts_destroy',
    role: 'primary',
    marker,
    find: { list: 'contacts_list', query: `external_ref=${marker}` },
  });
  const response = await t.call('contacts_create', {
    body: { managing_account: account, consuming_account: account, external_ref: marker, ...CONTACT_FIELDS },
  });
  const id = idOf(response.body);
  if (response.status !== 201 || id === undefined) {
    t.suite.ledger.removed(seq);
    if (response.status === 400)
      t.inconclusive(`the exchange refused the suite's contact: ${response.text.slice(0, 200)}`);
    t.must(false, `creating a contact answered ${response.status}, not 201: ${response.text.slice(0, 200)}`);
    return t.inconclusive('without the contact nothing else could be judged');
  }
  t.suite.ledger.created(seq, id);
  return id;
}

const SERVICE_PATCH = 'network_services_partial_update';
/** A type of service other than mp2mp_vc, which a PATCH of one must not take. */
const OTHER_SERVICE_TYPE = 'p2mp_vc';

/** Checks of the full profile: they act on what the suite creates itself. */
export const CLIENT_CHECKS: CheckDefinition[] = [
  {
    id: 'CLIENT-008',
    title: "A DELETE with a JSON null body removes a contact of the suite's own",
    clause:
      "Clients: the Terraform provider sends DELETE with the literal JSON body null, labelled application/json, and decodes the answer into the resource (a 204 breaks it). A DELETE of a contact of the suite's own with that body is taken like one without a body: it answers as documented (200, or 202) with the contact as JSON, which then no longer reads (404).",
    operations: ['contacts_destroy', 'contacts_create'],
    requires: ['contacts_create', 'contacts_destroy', 'contacts_list', 'contacts_read'],
    safety: 'mutate',
    async run(t) {
      try {
        const id = await ownContact(t);
        const response = await t.call('contacts_destroy', { id, rawBody: 'null', headers: JSON_TYPE });
        const what = `DELETE of contact ${id} with the JSON body null`;
        if (
          !t.must(
            [200, 202].includes(response.status),
            `${what} answered ${response.status}, not 200 or 202${[400, 415].includes(response.status) ? ': the body was refused' : ''}${refusal(response)}`,
          )
        )
          return;
        t.must(
          idOf(response.body) === id,
          `${what} answered ${response.text.slice(0, 120) || 'no body'}, not the contact as JSON`,
        );
        const read = await t.call('contacts_read', { id });
        t.must(read.status === 404, `after ${what} the contact reads with ${read.status}, not 404`);
      } finally {
        await cleanUp(t);
      }
    },
  },
  {
    id: 'CLIENT-009',
    title:
      "A service of the suite's own changes with PATCH with or without its type, and refuses another type",
    clause:
      "Clients: the Terraform provider sends type on PATCH of polymorphic resources, pyixapi sends only the changed fields, without type; a present type must equal the stored one. On a private mp2mp_vc service of the suite's own: PATCH with type answers 202 and what was sent shows; PATCH without it should be taken alike (the document's Patch form requires type, clients leave it out); PATCH with another type is a 400 validation-error naming type and changes nothing (the document: type must match). The service is then cancelled with the DELETE body {} the Terraform provider sends, answered 202 with the service as JSON. INCONCLUSIVE without an mp2mp_vc offering orderable today or when the exchange refuses the order.",
    operations: [SERVICE_PATCH, SERVICES.destroy],
    requires: [...ORDERING_SERVICES, 'network_services_list', SERVICE_PATCH],
    safety: 'mutate',
    deadlineMs: 90_000,
    async run(t) {
      try {
        const [offering] = await serviceOfferings(t, 'mp2mp_vc');
        if (!offering) t.inconclusive('the exchange has no mp2mp_vc offering orderable today');
        const { id } = await orderService(
          t,
          await ownOrder(t, 'mp2mp_vc', offering, { display_name: 'Conformance client', public: false }),
          'a private mp2mp_vc service',
        );
        await change(
          t,
          SERVICES,
          SERVICE_PATCH,
          id,
          { type: 'mp2mp_vc', display_name: 'Conformance client, with type' },
          ['display_name'],
        );
        await untypedChange(
          t,
          SERVICES,
          SERVICE_PATCH,
          id,
          { display_name: 'Conformance client, without type' },
          'mp2mp_vc',
          'display_name',
        );
        await refusedChange(t, SERVICES, SERVICE_PATCH, id, { type: OTHER_SERVICE_TYPE }, ['type']);
        const cancelled = await t.call(SERVICES.destroy, { id, rawBody: '{}', headers: JSON_TYPE });
        const what = `DELETE of service ${id} with the JSON body {} (as the Terraform provider sends it)`;
        if (
          t.must(
            cancelled.status === 202,
            `${what} answered ${cancelled.status}, not 202${refusal(cancelled)}`,
          )
        )
          t.must(
            idOf(cancelled.body) === id,
            `${what} answered ${cancelled.text.slice(0, 120) || 'no body'}, not the service as JSON`,
          );
      } finally {
        await finish(t);
      }
    },
  },
];
