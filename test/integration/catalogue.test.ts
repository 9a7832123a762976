import assert from 'node:assert/strict';
import { CATALOGUE_COLLECTIONS } from '../../api/routes/catalogue';
import { loadSpec, operationParameters, specOperations } from '../../spec';
import { login, request } from '../support/http';
import { stack } from '../support/stack';

const document = loadSpec();
const operations = new Map(specOperations(document).map((op) => [op.operationId, op]));
const COMMON = new Set(['id', 'page_limit', 'page_offset', 'page_token', 'fields']);

interface Filter {
  name: string;
  type: string | undefined;
  enumValues: unknown[] | undefined;
}

function filtersOf(operationId: string): Filter[] {
  const op = operations.get(operationId)!;
  return operationParameters(document, op.path, op.method, op.operation, 'query')
    .map(([parameter]) => parameter)
    .filter((parameter) => !COMMON.has(parameter.name))
    .map((parameter) => {
      const schema = (parameter.schema ?? {}) as { type?: string; enum?: unknown[]; $ref?: string };
      return {
        name: parameter.name,
        type: schema.type ?? (schema.$ref ? 'string' : undefined),
        enumValues: schema.enum,
      };
    });
}

// The exchange's operator sees the whole catalogue, its own spare ports included.
let token: string;
before(async () => {
  token = (await login('operator')).accessToken;
});

async function list(path: string, query = '') {
  return request('GET', `${path}${query ? `?${query}` : ''}`, { token });
}

for (const entry of CATALOGUE_COLLECTIONS) {
  const path = operations.get(entry.list)!.path;

  describe(`collection ${path}`, () => {
    let everything: Array<Record<string, unknown>>;

    before(async () => {
      const response = await list(path);
      assert.equal(response.status, 200);
      everything = response.body;
    });

    it('returns the whole demo collection as a bare array without page_limit', () => {
      assert.ok(Array.isArray(everything));
      assert.ok(everything.length > 0, 'the demo exchange has data here');
      const ids = everything.map((item) => item.id as string);
      assert.deepEqual([...ids].sort(), ids, 'a stable order by id');
    });

    it('answers 401 without a token', async () => {
      const response = await request('GET', path);
      assert.equal(response.status, 401);
    });

    it('filters by id, as `a,b` and as repeated parameters', async () => {
      const [a, b] = everything.map((item) => item.id as string);
      const wanted = b ? [a, b] : [a];
      const comma = await list(path, `id=${wanted.join(',')}`);
      const repeated = await list(path, wanted.map((id) => `id=${id}`).join('&'));
      assert.deepEqual(
        comma.body.map((item: { id: string }) => item.id),
        wanted,
      );
      assert.deepEqual(repeated.body, comma.body);
      const none = await list(path, 'id=no-such-id');
      assert.deepEqual(none.body, []);
    });

    it('ignores unknown parameters', async () => {
      const response = await list(path, 'consuming_customer=x&no_such_filter=1');
      assert.equal(response.status, 200);
      assert.equal(response.body.length, everything.length);
    });

    it('narrows by every filter that names a property, to matching items only', async () => {
      for (const filter of filtersOf(entry.list)) {
        const sample = everything.find(
          (item) => item[filter.name] !== undefined && item[filter.name] !== null,
        );
        if (!sample || typeof sample[filter.name] === 'object') continue;
        const value = sample[filter.name];
        const response = await list(path, `${filter.name}=${encodeURIComponent(String(value))}`);
        assert.equal(response.status, 200, `${filter.name}=${String(value)}`);
        assert.ok(response.body.length > 0, `${filter.name}=${String(value)} finds the item it came from`);
        const expected = everything.filter((item) => item[filter.name] === value).map((item) => item.id);
        assert.deepEqual(
          response.body.map((item: { id: string }) => item.id),
          expected,
          `${filter.name}=${String(value)}`,
        );
      }
    });

    it('answers a bad filter value with 400 naming the parameter', async () => {
      for (const filter of filtersOf(entry.list)) {
        if (filter.type !== 'integer' && !filter.enumValues) continue;
        const response = await list(path, `${filter.name}=not-a-valid-value`);
        assert.equal(response.status, 400, filter.name);
        assert.equal(response.body.properties[0].name, filter.name);
      }
    });

    it('pages with 206 and the seven headers, and walking Next yields every item exactly once', async () => {
      const seen: string[] = [];
      let next: string | null = `${path}?page_limit=3`;
      let pages = 0;
      while (next) {
        const response = await request('GET', next, { token });
        assert.equal(response.status, 206);
        for (const header of ['Limit', 'Offset', 'Items', 'Pages', 'Page', 'Token', 'Next']) {
          assert.ok(response.headers.has(`x-pagination-${header.toLowerCase()}`), `X-Pagination-${header}`);
        }
        assert.equal(Number(response.headers.get('x-pagination-items')), everything.length);
        assert.equal(Number(response.headers.get('x-pagination-page')), pages + 1);
        seen.push(...response.body.map((item: { id: string }) => item.id));
        next = response.headers.get('x-pagination-next') || null;
        pages += 1;
        assert.ok(pages <= everything.length, 'paging ends');
      }
      assert.equal(pages, Math.max(1, Math.ceil(everything.length / 3)));
      assert.deepEqual(
        seen,
        everything.map((item) => item.id),
      );
    });

    it('rejects an invalid page_token and bad paging values with 400', async () => {
      const stale = await list(path, 'page_limit=2&page_token=not-the-token');
      assert.equal(stale.status, 400);
      assert.equal(stale.body.properties[0].name, 'page_token');
      for (const query of ['page_limit=0', 'page_limit=abc', 'page_offset=-1', `page_limit=2000`]) {
        const response = await list(path, query);
        assert.equal(response.status, 400, query);
      }
    });

    it('changes X-Pagination-Token after an insert and refuses the stale token', async () => {
      const { sequelize } = stack().db;
      const table = entry.collection.table;
      const source = String(everything[0].id);
      const copy = `${source}-copy`;
      const [columns] = await sequelize.query(`SHOW COLUMNS FROM ${table}`);
      const names = (columns as Array<{ Field: string }>).map((c) => c.Field);
      // A copy of an existing row under a new id (and, where names are unique, a new name).
      const select = names.map((name) =>
        name === 'id' ? ':copy' : name === 'name' && table === 'roles' ? "CONCAT(name, '-copy')" : name,
      );
      const before = await list(path, 'page_limit=1');
      const oldToken = before.headers.get('x-pagination-token');
      await sequelize.query(
        `INSERT INTO ${table} (${names.join(', ')}) SELECT ${select.join(', ')} FROM ${table} WHERE id = :source`,
        { replacements: { copy, source } },
      );
      try {
        const after = await list(path, 'page_limit=1');
        assert.notEqual(after.headers.get('x-pagination-token'), oldToken);
        assert.equal(Number(after.headers.get('x-pagination-items')), everything.length + 1);
        const stale = await list(path, `page_limit=1&page_offset=1&page_token=${oldToken}`);
        assert.equal(stale.status, 400);
      } finally {
        await sequelize.query(`DELETE FROM ${table} WHERE id = :copy`, { replacements: { copy } });
      }
    });

    if (entry.read) {
      it('reads each item by id as it appears in the list, and 404 for an unknown id', async () => {
        for (const item of everything.slice(0, 5)) {
          const response = await request('GET', `${path}/${String(item.id)}`, { token });
          assert.equal(response.status, 200);
          assert.deepEqual(response.body, item);
        }
        const missing = await request('GET', `${path}/no-such-id`, { token });
        assert.equal(missing.status, 404);
        const unauthenticated = await request('GET', `${path}/${String(everything[0].id)}`);
        assert.equal(unauthenticated.status, 401);
      });
    }
  });
}

describe('collection semantics beyond equality', () => {
  it('combines filters as a conjunction', async () => {
    const both = await list('/ports', 'pop=pop-fra-1&speed=400000');
    assert.ok(both.body.length > 0);
    assert.ok(
      both.body.every((p: { pop: string; speed: number }) => p.pop === 'pop-fra-1' && p.speed === 400000),
    );
    const popOnly = await list('/ports', 'pop=pop-fra-1');
    assert.ok(popOnly.body.length > both.body.length);
  });

  it('filters devices, PoPs and facilities by capability speed ranges, in both spellings', async () => {
    const core = await list('/devices', 'capability_speed_gte=400000');
    assert.ok(core.body.length > 0);
    assert.ok(
      core.body.every((d: { capabilities: Array<{ speed: number }> }) =>
        d.capabilities.some((c) => c.speed >= 400000),
      ),
    );
    const old = await list('/devices', 'capability_speed__gte=400000');
    assert.deepEqual(old.body, core.body);
    const edgeOnly = await list('/devices', 'capability_speed_lt=100000');
    assert.ok(
      edgeOnly.body.every((d: { capabilities: Array<{ speed: number }> }) =>
        d.capabilities.some((c) => c.speed < 100000),
      ),
    );
    const all = await list('/devices');
    assert.ok(core.body.length < all.body.length && edgeOnly.body.length < all.body.length);
    const facilities = await list('/facilities', 'capability_speed=400000&metro_area=ma-fra');
    assert.ok(facilities.body.length > 0);
    assert.ok(facilities.body.every((f: { metro_area: string }) => f.metro_area === 'ma-fra'));
  });

  it('filters by relations that are not properties of the item', async () => {
    const pops = (await list('/pops')).body as Array<{
      id: string;
      facility: string;
      metro_area_network: string;
    }>;
    const popsOf = (man: string) => pops.filter((p) => p.metro_area_network === man);

    const facilities = await list('/facilities', 'metro_area_network=man-fra');
    assert.deepEqual(
      facilities.body.map((f: { id: string }) => f.id),
      [...new Set(popsOf('man-fra').map((p) => p.facility))].sort(),
    );

    const devices = await list('/devices', 'metro_area_network=man-ams');
    assert.ok(devices.body.length > 0);
    const amsPops = new Set(popsOf('man-ams').map((p) => p.id));
    assert.ok(devices.body.every((d: { pop: string }) => amsPops.has(d.pop)));
    assert.ok(devices.body.length < (await list('/devices')).body.length);

    // Exchange LANs by their metro area network (circuits at a PoP are offered there, see network-services).
    const services = await list('/network-services', 'pop=pop-ham-1&type=exchange_lan');
    assert.deepEqual(
      services.body.map((n: { metro_area_network: string }) => n.metro_area_network),
      ['man-ham'],
    );

    const popsWith400 = await list('/pops', 'capability_speed=400000');
    assert.deepEqual(
      popsWith400.body.map((p: { id: string }) => p.id),
      pops.map((p) => p.id),
      'every PoP has a core device with 400G ports',
    );
    const popsWith1G = await list('/pops', 'capability_speed_lte=1000');
    assert.deepEqual(popsWith1G.body, []);

    const legalRoles = await list('/roles', 'contact=con-demo-ix-legal');
    assert.deepEqual(
      legalRoles.body.map((r: { name: string }) => r.name),
      ['legal'],
    );
    const othersRoles = await list('/roles', 'contact=con-spree-networks-legal');
    assert.deepEqual(othersRoles.body, [], "another account's contact matches nothing");
  });

  it('keeps offerings whose bandwidth range contains `bandwidth`', async () => {
    const response = await list('/product-offerings', 'bandwidth=200000');
    assert.ok(response.body.length > 0);
    for (const offering of response.body) {
      assert.ok(offering.bandwidth_min === null || offering.bandwidth_min <= 200000);
      assert.ok(offering.bandwidth_max === null || offering.bandwidth_max >= 200000);
    }
    const all = await list('/product-offerings');
    assert.ok(response.body.length < all.body.length);
  });

  it('selects provider-first cloud offerings with a matching cloud_key', async () => {
    const matching = await list('/product-offerings', 'cloud_key=stratus-abcd1234');
    assert.ok(matching.body.length > 0);
    assert.ok(
      matching.body.every(
        (o: { type: string; service_provider_workflow: string }) =>
          o.type === 'cloud_vc' && o.service_provider_workflow === 'provider_first',
      ),
    );
    const other = await list('/product-offerings', 'cloud_key=unknown-key');
    assert.deepEqual(other.body, []);
  });

  it('offers every product type and two cloud providers', async () => {
    const all = await list('/product-offerings');
    const types = new Set(all.body.map((o: { type: string }) => o.type));
    for (const type of ['connection', 'exchange_lan', 'p2p_vc', 'mp2mp_vc', 'p2mp_vc', 'cloud_vc']) {
      assert.ok(types.has(type), type);
    }
    const providers = new Set(
      all.body
        .filter((o: { type: string }) => o.type === 'cloud_vc')
        .map((o: { service_provider: string }) => o.service_provider),
    );
    assert.ok(providers.size >= 2);
  });

  it('projects offerings to `fields`, keeping `type` and dropping duplicates', async () => {
    const response = await list('/product-offerings', 'fields=service_provider');
    assert.equal(response.status, 200);
    for (const item of response.body)
      assert.deepEqual(Object.keys(item).sort(), ['service_provider', 'type']);
    const keys = response.body.map((item: object) => JSON.stringify(item));
    assert.equal(new Set(keys).size, keys.length);
    const all = await list('/product-offerings');
    assert.ok(response.body.length < all.body.length);
  });

  it('excludes a state with state__is_not', async () => {
    const response = await list('/ports', 'state__is_not=production');
    assert.deepEqual(response.body, []);
  });

  it('serves the same page through the Next cursor as by offset, and ignores a cursor for another offset', async () => {
    const first = await list('/ports', 'speed=100000&page_limit=7');
    const viaNext = await request('GET', first.headers.get('x-pagination-next')!, { token });
    const byOffset = await list('/ports', 'speed=100000&page_limit=7&page_offset=7');
    assert.deepEqual(viaNext.body, byOffset.body);
    const cursorToken = new URL(first.headers.get('x-pagination-next')!, 'http://x').searchParams.get(
      'page_token',
    );
    const jumped = await list('/ports', `speed=100000&page_limit=7&page_offset=14&page_token=${cursorToken}`);
    const jumpedByOffset = await list('/ports', 'speed=100000&page_limit=7&page_offset=14');
    assert.deepEqual(jumped.body, jumpedByOffset.body);
  });

  it('carries every other parameter in X-Pagination-Next', async () => {
    const response = await list('/ports', 'speed=10000&pop=pop-fra-1&page_limit=5');
    const next = new URL(response.headers.get('x-pagination-next')!, 'http://x');
    assert.equal(next.pathname, '/ports');
    assert.equal(next.searchParams.get('speed'), '10000');
    assert.equal(next.searchParams.get('pop'), 'pop-fra-1');
    assert.equal(next.searchParams.get('page_offset'), '5');
    assert.equal(next.searchParams.get('page_limit'), '5');
    // The token, followed by a cursor that lets the next page start by key.
    const pageTokenInNext = next.searchParams.get('page_token')!;
    const headerToken = response.headers.get('x-pagination-token')!;
    assert.ok(pageTokenInNext.startsWith(`${headerToken}.`), `${pageTokenInNext} vs ${headerToken}`);
  });
});
