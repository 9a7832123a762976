import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import pino from 'pino';
import {
  ConnectionAcquireTimeoutError,
  ConnectionRefusedError,
  DatabaseError,
  ForeignKeyConstraintError,
  UniqueConstraintError,
} from 'sequelize';
import { problemHandler } from '../../api/problems';
import type { DomainError } from '../../domain/errors';
import {
  AuthenticationError,
  NotFoundError,
  PermissionDeniedError,
  SignatureExpiredError,
  UnableToFulfillError,
  ValidationError,
  CancellationPolicyError,
} from '../../domain/errors';

/** Every domain error becomes its IX-API problem, through the one error middleware. */
describe('problem responses from domain errors', () => {
  let server: Server;
  let base: string;
  const errors: Record<string, () => DomainError> = {
    validation: () => new ValidationError([{ name: 'address.country', reason: 'Must be two letters.' }]),
    authentication: () => new AuthenticationError('bad token'),
    expired: () => new SignatureExpiredError('expired'),
    denied: () => new PermissionDeniedError('not yours to change'),
    missing: () => new NotFoundError('no such thing'),
    policy: () =>
      new CancellationPolicyError('the first possible day is 2027-01-15', {
        decommission_at: '2027-01-15',
        charged_until: '2027-01-31',
      }),
    conflict: () =>
      new UnableToFulfillError('id', 'contact con-1 holds a role that role-assignments ra-1 still needs', [
        {
          resource_type: 'contacts',
          resource_id: 'con-1',
          resource_property: null,
          remote_resource_type: 'role-assignments',
          remote_resource_id: 'ra-1',
        },
      ]),
  };

  before(async () => {
    const app = express();
    app.get('/:kind', (req) => {
      if (req.params.kind === 'crash') throw new Error('secret internal detail');
      if (req.params.kind === 'duplicate') throw new UniqueConstraintError({ message: 'secret index name' });
      if (req.params.kind === 'reference') throw new ForeignKeyConstraintError({ message: 'secret fk name' });
      if (req.params.kind === 'deadlock')
        throw new DatabaseError(
          Object.assign(new Error('secret deadlock'), {
            errno: 1213,
            code: 'ER_LOCK_DEADLOCK',
            sql: 'SELECT 1',
          }),
        );
      if (req.params.kind === 'busy')
        throw new ConnectionAcquireTimeoutError(new Error('secret pool detail'));
      if (req.params.kind === 'refused')
        throw new ConnectionRefusedError(
          Object.assign(new Error('secret host:port'), { code: 'ECONNREFUSED' }),
        );
      if (req.params.kind === 'lost')
        throw new DatabaseError(
          Object.assign(new Error('secret connection lost'), {
            code: 'PROTOCOL_CONNECTION_LOST',
            sql: 'COMMIT',
          }),
        );
      if (req.params.kind === 'not-ready')
        throw new DatabaseError(
          Object.assign(new Error('secret WSREP has not yet prepared node for application use'), {
            errno: 1047,
            code: 'ER_UNKNOWN_COM_ERROR',
            sql: 'SELECT 1',
          }),
        );
      if (req.params.kind === 'syntax')
        throw new DatabaseError(
          Object.assign(new Error('secret syntax'), { errno: 1064, code: 'ER_PARSE_ERROR', sql: 'SELEC 1' }),
        );
      throw errors[req.params.kind]();
    });
    app.use(problemHandler(pino({ level: 'silent' })));
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  const expectations: Array<[string, number, string]> = [
    ['validation', 400, 'validation-error'],
    ['authentication', 401, 'authentication-error'],
    ['expired', 401, 'signature-expired'],
    ['denied', 403, 'permission-denied'],
    ['missing', 404, 'not-found'],
    ['conflict', 400, 'unable-to-fulfill'],
    ['policy', 400, 'cancellation-policy-error'],
  ];
  for (const [kind, status, type] of expectations) {
    it(`maps ${kind} to ${status} ${type}`, async () => {
      const response = await fetch(`${base}/${kind}`);
      assert.equal(response.status, status);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      const body = (await response.json()) as Record<string, unknown>;
      assert.equal(body.type, `https://errors.ix-api.net/v2/${type}.html`);
      assert.equal(body.status, status);
      assert.equal(typeof body.title, 'string');
    });
  }

  it('lists properties on validation errors and conflicts on unable-to-fulfill', async () => {
    const validation = (await (await fetch(`${base}/validation`)).json()) as Record<string, unknown>;
    assert.deepEqual(validation.properties, [{ name: 'address.country', reason: 'Must be two letters.' }]);
    const conflict = (await (await fetch(`${base}/conflict`)).json()) as { conflicts: unknown[] };
    assert.equal(conflict.conflicts.length, 1);
  });

  it('names what to change in the properties of every 400, whatever its type', async () => {
    for (const kind of ['validation', 'conflict', 'policy', 'duplicate', 'reference', 'deadlock']) {
      const body = (await (await fetch(`${base}/${kind}`)).json()) as {
        status: number;
        detail: string;
        properties?: Array<{ name: unknown; reason: unknown }>;
      };
      assert.equal(body.status, 400, kind);
      assert.ok(body.properties?.length, `${kind}: ${JSON.stringify(body)}`);
      for (const property of body.properties)
        assert.ok(typeof property.name === 'string' && typeof property.reason === 'string', kind);
    }
    const conflict = (await (await fetch(`${base}/conflict`)).json()) as Record<string, unknown>;
    assert.deepEqual(conflict.properties, [
      { name: 'id', reason: 'contact con-1 holds a role that role-assignments ra-1 still needs' },
    ]);
    const policy = (await (await fetch(`${base}/policy`)).json()) as Record<string, unknown>;
    assert.deepEqual(policy.properties, [
      { name: 'decommission_at', reason: 'the first possible day is 2027-01-15' },
    ]);
    assert.equal(policy.decommission_at, '2027-01-15');
  });

  it('answers an unexpected error with a 500 problem that leaks nothing', async () => {
    const response = await fetch(`${base}/crash`);
    assert.equal(response.status, 500);
    const text = await response.text();
    assert.doesNotMatch(text, /secret internal detail/);
    assert.equal(
      (JSON.parse(text) as { type: string }).type,
      'https://errors.ix-api.net/v2/server-error.html',
    );
  });

  it('answers a write that collided with a concurrent one as unable to fulfil, naming no internals', async () => {
    for (const kind of ['duplicate', 'reference', 'deadlock']) {
      const response = await fetch(`${base}/${kind}`);
      assert.equal(response.status, 400);
      const text = await response.text();
      assert.doesNotMatch(text, /secret/);
      const body = JSON.parse(text) as { type: string; conflicts: unknown[] };
      assert.equal(body.type, 'https://errors.ix-api.net/v2/unable-to-fulfill.html');
      assert.deepEqual(body.conflicts, []);
    }
  });

  it('answers a request that found no free database connection in time with 503 and Retry-After', async () => {
    const response = await fetch(`${base}/busy`);
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '2');
    const text = await response.text();
    assert.doesNotMatch(text, /secret/);
    assert.equal((JSON.parse(text) as { status: number }).status, 503);
  });

  it('answers 503 with Retry-After while the database cannot be reached or is not part of its cluster', async () => {
    for (const kind of ['refused', 'lost', 'not-ready']) {
      const response = await fetch(`${base}/${kind}`);
      assert.equal(response.status, 503, kind);
      assert.equal(response.headers.get('retry-after'), '5', kind);
      const text = await response.text();
      assert.doesNotMatch(text, /secret/);
      const body = JSON.parse(text) as { status: number; detail: string };
      assert.equal(body.status, 503);
      assert.match(body.detail, /read it back before you send it again/);
    }
  });

  it('answers any other database error with a 500 that leaks nothing, without Retry-After', async () => {
    const response = await fetch(`${base}/syntax`);
    assert.equal(response.status, 500);
    assert.equal(response.headers.get('retry-after'), null);
    assert.doesNotMatch(await response.text(), /secret/);
  });
});
