import assert from 'node:assert/strict';
import { loadSpec, specOperations } from '../../spec';
import { login, request } from '../support/http';
import { stack } from '../support/stack';

const problemType = (name: string) => `https://errors.ix-api.net/v2/${name}.html`;

describe('problem responses', () => {
  it('answers an unknown path with a JSON 404 not-found problem', async () => {
    for (const path of ['/no-such-collection', '/../../etc/passwd']) {
      const response = await request('GET', path);
      assert.equal(response.status, 404);
      assert.equal(response.body.type, problemType('not-found'));
    }
    const outside = await fetch(stack().baseUrl.replace('/api/v2', '/elsewhere'));
    assert.equal(outside.status, 404);
    assert.equal(((await outside.json()) as { type: string }).type, problemType('not-found'));
  });

  it('answers a wrong method with 405 and the allowed methods', async () => {
    const response = await request('DELETE', '/auth/token');
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
  });

  it('answers malformed JSON with a 400 validation problem', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: '{"api_key": ',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.type, problemType('validation-error'));
    assert.equal(response.body.properties[0].name, 'body');
  });

  it('answers a body that is not JSON with 415', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: 'api_key=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(response.status, 415);
  });

  it('answers an oversized body with 413', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: JSON.stringify({ api_key: 'x'.repeat(2 * 1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 413);
  });

  it('accepts JSON null as a body and validates it as a missing body', async () => {
    const response = await request('POST', '/auth/token', {
      rawBody: 'null',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.properties[0].name, 'body');
  });

  it('validates the type of every property', async () => {
    const response = await request('POST', '/auth/token', {
      body: { api_key: 1234567890123456, api_secret: ['x'] },
    });
    assert.equal(response.status, 400);
    assert.deepEqual(response.body.properties.map((p: { name: string }) => p.name).sort(), [
      'api_key',
      'api_secret',
    ]);
  });

  it('returns a request id, echoing a sane incoming one', async () => {
    const generated = await request('GET', '/health');
    assert.match(generated.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const echoed = await request('GET', '/health', { headers: { 'x-request-id': 'trace-123' } });
    assert.equal(echoed.headers.get('x-request-id'), 'trace-123');
    const replaced = await request('GET', '/health', { headers: { 'x-request-id': 'bad id\twith junk' } });
    assert.notEqual(replaced.headers.get('x-request-id'), 'bad id\twith junk');
  });
});

describe('bounded answers to unbounded input', () => {
  const validationError = problemType('validation-error');
  const exchangeLanConfig = {
    type: 'exchange_lan',
    network_service: 'ns-fra-peering',
    managing_account: 'acc-spree-networks',
    consuming_account: 'acc-spree-networks',
    billing_account: 'acc-spree-networks',
    role_assignments: [],
    connection: 'conn-none',
    vlan_config: { vlan_type: 'port' },
    asns: [64500],
    listed: true,
  };
  let token: string;
  before(async () => {
    token = (await login('customer')).accessToken;
  });

  it('answers a body of 100,000 bad integers with one small problem naming the array', async () => {
    const rawBody = JSON.stringify({ ...exchangeLanConfig, asns: Array(100_000).fill(-1) });
    assert.ok(rawBody.length > 300_000);
    const response = await request('POST', '/network-service-configs', {
      token,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.type, validationError);
    assert.deepEqual(response.body.properties, [
      { name: 'asns', reason: 'Must NOT have more than 100 items.' },
    ]);
    assert.ok(response.text.length < 1000, `an answer of ${response.text.length} bytes`);
  });

  it('names at most 20 failing properties and says how many more there were', async () => {
    const response = await request('POST', '/network-service-configs', {
      token,
      body: { ...exchangeLanConfig, macs: Array(100).fill(1) },
    });
    assert.equal(response.status, 400);
    assert.equal(response.body.properties.length, 20);
    assert.equal(response.body.properties[19].name, 'macs.19');
    assert.match(response.body.detail, /and 80 more properties did not validate$/);
  });

  it('refuses integers JavaScript cannot hold exactly in a body, naming the property', async () => {
    for (const literal of ['1e400', '9223372036854775808', '-9223372036854775809']) {
      const rawBody = JSON.stringify({ ...exchangeLanConfig, capacity: 0 }).replace(
        '"capacity":0',
        `"capacity":${literal}`,
      );
      const response = await request('POST', '/network-service-configs', {
        token,
        rawBody,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(response.status, 400, literal);
      assert.equal(response.body.type, validationError);
      assert.deepEqual(
        response.body.properties.map((p: { name: string }) => p.name),
        ['capacity'],
        literal,
      );
    }
  });

  it('stores no control or bidirectional formatting character in a name or an address', async () => {
    const contact = { managing_account: 'acc-spree-networks', consuming_account: 'acc-spree-networks' };
    for (const name of ['Eve\u0000', 'Eve\u0007Mallory', 'Eve\u0085', 'Eve\u202eyllaM', 'Eve\u2066x\u2069']) {
      const response = await request('POST', '/contacts', { token, body: { ...contact, name } });
      assert.equal(response.status, 400, JSON.stringify(name));
      assert.equal(response.body.type, validationError);
      assert.deepEqual(
        response.body.properties.map((p: { name: string }) => p.name),
        ['name'],
      );
      assert.match(response.body.properties[0].reason, /control characters/);
    }
    const created = await request('POST', '/contacts', { token, body: { ...contact, name: 'Zoë Ünal 🚀' } });
    assert.equal(created.status, 201, created.text);
    const patched = await request('PATCH', `/contacts/${created.body.id}`, {
      token,
      body: { name: 'Zoë\u202eÜnal' },
    });
    assert.equal(patched.status, 400);
    assert.deepEqual(
      patched.body.properties.map((p: { name: string }) => p.name),
      ['name'],
    );
    const account = await request('POST', '/accounts', {
      token,
      body: {
        name: 'Bidi Networks',
        address: {
          country: 'DE',
          locality: 'Berlin',
          postal_code: '10115',
          street_address: 'Invalidenstr.\u2067 1',
        },
      },
    });
    assert.equal(account.status, 400);
    assert.deepEqual(
      account.body.properties.map((p: { name: string }) => p.name),
      ['address.street_address'],
    );
  });

  it('refuses control characters in the body of every operation that takes JSON', async () => {
    const operator = (await login('operator')).accessToken;
    // The updates of these families read the resource before validating (to complete `type`), so
    // with no such resource they answer 404; the unit tests hold their bodies to the same rule.
    const readFirst =
      /^(network_services|network_service_configs|network_feature_configs|member_joining_rules)_(update|partial_update)$/;
    let refused = 0;
    for (const { operationId, method, path, operation } of specOperations(loadSpec())) {
      const content = operation.requestBody?.content ?? {};
      if (!Object.keys(content).some((type) => type.includes('json'))) continue;
      const target = path.replace('{id}', path.startsWith('/accounts') ? 'acc-demo-ix' : 'no-such-resource');
      const response = await request(method.toUpperCase(), target, {
        token: operation.security?.length === 0 ? undefined : operator,
        body: { junk: 'a\u0000b' },
      });
      if (readFirst.test(operationId) && response.status === 404) continue;
      assert.equal(response.status, 400, `${operationId}: ${response.text.slice(0, 200)}`);
      assert.ok(
        response.body.properties.some(
          (p: { name: string; reason: string }) => p.name === 'junk' && /control characters/.test(p.reason),
        ),
        `${operationId}: ${response.text.slice(0, 300)}`,
      );
      refused++;
    }
    assert.ok(refused >= 25, `${refused} operations refused the body`);
  });
});
