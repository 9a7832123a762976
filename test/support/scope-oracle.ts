import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { QueryTypes } from 'sequelize';
import type { OpenApiDocument } from '../../spec';
import { stack } from './stack';

/**
 * An independent statement of who may see what, checked against every successful response the
 * integration tests receive: it reads the account hierarchy and the contacts straight from the
 * database and walks the hierarchy itself, sharing no code with the server's scoping.
 *
 * - an account outside the caller's scope appears only if discoverable, and only as its public view;
 * - a resource with managing and consuming accounts appears only to either side;
 * - a role assignment appears only with a contact the caller sees; an event only to the sides of its
 *   accounts; a port reservation only with its connection.
 */

const PUBLIC_ACCOUNT_VIEW = new Set(['id', 'name', 'metro_area_network_presence']);

interface Graph {
  accounts: Map<string, { managing: string | null; discoverable: boolean }>;
  contacts: Map<string, { managing: string; consuming: string }>;
}

const sequelizeOf = () => stack().db.sequelize;

async function loadGraph(): Promise<Graph> {
  const { sequelize } = stack().db;
  const accounts = await sequelize.query<{
    id: string;
    managing_account: string | null;
    discoverable: number;
  }>('SELECT id, managing_account, discoverable FROM accounts', { type: QueryTypes.SELECT });
  const contacts = await sequelize.query<{ id: string; managing_account: string; consuming_account: string }>(
    'SELECT id, managing_account, consuming_account FROM contacts',
    { type: QueryTypes.SELECT },
  );
  return {
    accounts: new Map(
      accounts.map((a) => [a.id, { managing: a.managing_account, discoverable: Boolean(a.discoverable) }]),
    ),
    contacts: new Map(
      contacts.map((c) => [c.id, { managing: c.managing_account, consuming: c.consuming_account }]),
    ),
  };
}

/** The account itself and every account below it in the hierarchy. */
function actingFor(graph: Graph, accountId: string): Set<string> {
  const result = new Set([accountId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [id, account] of graph.accounts) {
      if (!result.has(id) && account.managing !== null && result.has(account.managing)) {
        result.add(id);
        grew = true;
      }
    }
  }
  return result;
}

interface SchemaLike {
  $ref?: string;
  type?: string;
  items?: SchemaLike;
  properties?: Record<string, unknown>;
}

/** The name of the resource schema a success response carries (a list's item schema for lists). */
export function resourceSchemaOf(response: unknown): string | undefined {
  const content = (response as { content?: Record<string, { schema?: SchemaLike }> } | undefined)?.content;
  let schema = content?.['application/json']?.schema;
  if (schema?.type === 'array') schema = schema.items;
  return schema?.$ref?.split('/').pop();
}

function hasOwnership(document: OpenApiDocument, schemaName: string): boolean {
  const properties = (document.components.schemas[schemaName] as SchemaLike | undefined)?.properties ?? {};
  return 'managing_account' in properties && 'consuming_account' in properties;
}

/**
 * Fails when a success response shows the caller something outside its scope. Deletions are not
 * checked: what they return no longer exists to compare with, and the caller just proved its right.
 */
export async function assertWithinScope(options: {
  document: OpenApiDocument;
  method: string;
  where: string;
  schemaName: string | undefined;
  token: string | undefined;
  body: unknown;
}): Promise<void> {
  const { document, schemaName, token, body, where } = options;
  if (!token || !schemaName || options.method.toUpperCase() === 'DELETE') return;
  const owned = hasOwnership(document, schemaName);
  if (!owned && !['Account', 'RoleAssignment', 'Event', 'PortReservation'].includes(schemaName)) return;
  let subject: string | undefined;
  try {
    subject = decodeJwt(token).sub;
  } catch {
    return;
  }
  const graph = await loadGraph();
  if (!subject || !graph.accounts.has(subject)) return;
  const scope = actingFor(graph, subject);
  const items = (Array.isArray(body) ? body : [body]) as Array<Record<string, unknown>>;
  for (const item of items) {
    const what: string = `${where}: ${schemaName} ${String(item.id ?? item.serial)} shown to ${subject}`;
    if (schemaName === 'Account') {
      if (scope.has(item.id as string)) continue;
      assert.ok(
        graph.accounts.get(item.id as string)?.discoverable,
        `${what}: neither in scope nor discoverable`,
      );
      const hidden = Object.keys(item).filter((key) => !PUBLIC_ACCOUNT_VIEW.has(key));
      assert.deepEqual(hidden, [], `${what}: out of scope, yet carries ${hidden.join(', ')}`);
    } else if (owned) {
      assert.ok(
        scope.has(item.managing_account as string) || scope.has(item.consuming_account as string),
        `${what}: neither managed nor consumed by an account in scope`,
      );
    } else if (schemaName === 'RoleAssignment') {
      const contact = graph.contacts.get(item.contact as string);
      assert.ok(
        contact && (scope.has(contact.managing) || scope.has(contact.consuming)),
        `${what}: its contact is out of scope`,
      );
    } else if (schemaName === 'Event') {
      if (scope.has(item.account as string)) continue;
      // An event about a resource with two sides is also the consuming side's.
      const [row] = await sequelizeOf().query<{ also_account: string | null }>(
        'SELECT also_account FROM events WHERE serial = :serial',
        { replacements: { serial: item.serial }, type: QueryTypes.SELECT },
      );
      assert.ok(row?.also_account && scope.has(row.also_account), `${what}: another account's event`);
    } else if (schemaName === 'PortReservation') {
      const [connection] = await sequelizeOf().query<{ managing_account: string; consuming_account: string }>(
        'SELECT managing_account, consuming_account FROM connections WHERE id = :id',
        { replacements: { id: item.connection }, type: QueryTypes.SELECT },
      );
      assert.ok(
        connection && (scope.has(connection.managing_account) || scope.has(connection.consuming_account)),
        `${what}: its connection is out of scope`,
      );
    }
  }
}
