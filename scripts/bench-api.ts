import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import path from 'node:path';
import autocannon from 'autocannon';
import { openDatabase } from '../db';
import { dropDatabase, ensureDatabase } from '../db/connection';
import { migrate } from '../db/migrator';
import { seedDemo } from '../db/seed';
import { sparePort } from '../db/seed/catalogue';
import { prepareOrders } from './bench-orders';
import { BENCH_NAMESPACE, temporalAnswers, temporalDevServer } from './bench-temporal';
import { build } from './build';
import type { Figures } from './bench-measure';
import {
  CONNECTIONS,
  DURATION_SECONDS,
  measure,
  measurePaired,
  measureWrite,
  pairedShare,
  printTable,
} from './bench-measure';
import { selfTimeByPlace } from './cpu-profile';
import { explained, listStatements, statementsOfOneWrite } from './bench-statements';

/**
 * `npm run bench:api`: throughput and latency of the API on this machine, not a test. Runs against
 * a throw-away database holding the demo exchange plus 100,000 extra ports (reads of ports are also
 * measured at 10,000, and with BENCH_SCALE=large at 1,000,000), with the API (metrics on, as
 * deployed), a second API without metrics (to price them), a third with tracing on, exporting every
 * span to a receiver in this process (to price tracing), a fourth as two processes (API_PROCESSES=2),
 * two whose Temporal is stopped or 200 ms away (orders are answered at commit, whatever Temporal
 * does), and bare Express "ceiling" servers (same JSON, no auth, database or validation; one and two
 * processes) in their own processes.
 */

/** An OTLP/HTTP receiver that takes every export and keeps nothing but a count of its bytes. */
async function startSpanSink(): Promise<{ url: string; bytes: () => number; close: () => void }> {
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => server.listen(8105, '127.0.0.1', resolve));
  return { url: 'http://127.0.0.1:8105', bytes: () => bytes, close: () => server.close() };
}

const ROOT = path.resolve(__dirname, '..');
const EXTRA_PORTS = 100_000;
/**
 * The numbers of extra ports at which the reads whose cost may grow with the table are measured:
 * 10,000 before the main measurements and 100,000 with them; BENCH_SCALE=large adds 1,000,000 after them.
 */
const SMALL_SCALE = 10_000;
const LARGE_SCALE = 1_000_000;
/** Orders sent at once for the burst figure. */
const BURST = 200;
const TEMPORAL_ADDRESS = '127.0.0.1:8108';
/** How far away (each way) the far Temporal of the answers-at-commit figure is. */
const TEMPORAL_DELAY_MS = 200;

const log = (message: string) => process.stdout.write(`[bench] ${message}\n`);

/** Adds the extra ports numbered `from` up to `to` (exclusive), in bulk. */
async function addPorts(db: ReturnType<typeof openDatabase>, from: number, to: number): Promise<void> {
  const devices = (await db.sequelize.query('SELECT id, pop FROM devices ORDER BY id'))[0] as Array<{
    id: string;
    pop: string;
  }>;
  const now = new Date();
  for (let start = from; start < to; start += 5000) {
    const rows = [];
    for (let i = start; i < Math.min(start + 5000, to); i += 1) {
      const device = devices[i % devices.length];
      rows.push({
        ...sparePort({
          id: `port-bench-${String(i).padStart(7, '0')}`,
          device: device.id,
          pop: device.pop,
          name: `xe-1/0/${i}`,
          media_type: i % 2 ? '100GBASE-LR4' : '10GBASE-LR',
          speed: i % 2 ? 100_000 : 10_000,
        }),
        created_at: now,
        updated_at: now,
      });
    }
    await db.sequelize.getQueryInterface().bulkInsert('ports', rows);
  }
}

/** The tables the write ceiling inserts into (scripts/bench-ceiling.ts), as wide as an order's. */
async function prepareWriteCeiling(db: ReturnType<typeof openDatabase>): Promise<void> {
  await db.sequelize.query(
    'CREATE TABLE bench_ceiling_rows (id VARCHAR(64) PRIMARY KEY, body JSON NOT NULL, created_at DATETIME(3) NOT NULL)',
  );
  for (const [table, column] of [
    ['bench_ceiling_events', 'payload'],
    ['bench_ceiling_outbox', 'args'],
  ]) {
    await db.sequelize.query(
      `CREATE TABLE ${table} (id BIGINT AUTO_INCREMENT PRIMARY KEY, resource VARCHAR(64) NOT NULL, ${column} JSON NOT NULL, created_at DATETIME(3) NOT NULL)`,
    );
  }
}

/** The API and the ceilings run as deployed: compiled into this folder (main builds it first). */
const DIST = path.join(ROOT, 'dist');

/** Runs `script` (a path of the source tree) from its compiled form in dist/. */
function startProcess(script: string, env: NodeJS.ProcessEnv, nodeOptions: string[] = []): ChildProcess {
  return spawn(process.execPath, [...nodeOptions, path.join(DIST, script.replace(/\.ts$/, '.js'))], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function waitUntil(what: string, ready: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 120; attempt += 1) {
    try {
      if (await ready()) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${what} did not answer`);
}

const waitForUrl = (url: string, headers: Record<string, string> = {}) =>
  waitUntil(url, async () => (await fetch(url, { headers })).status < 500);

/** The reads whose cost could grow with the number of ports, at one number of them. */
interface ScaleFigures {
  ports: number;
  byId: Figures;
  first: Figures;
  deep: Figures;
  viaNext: Figures;
}

/** Where the deep page lies: the last full page of the ports matching speed=10000. */
async function deepPageOf(api: string, auth: Record<string, string>) {
  const matching = Number(
    (await fetch(`${api}/ports?speed=10000&page_limit=1`, { headers: auth })).headers.get(
      'x-pagination-items',
    ),
  );
  const offset = Math.max(100, Math.floor((matching - 100) / 100) * 100);
  // A client walking X-Pagination-Next reaches the deep page by key rather than by offset.
  const before = await fetch(`${api}/ports?speed=10000&page_limit=100&page_offset=${offset - 100}`, {
    headers: auth,
  });
  return { matching, offset, viaNext: `${api}${before.headers.get('x-pagination-next')}` };
}

async function measureScale(ports: number, api: string, auth: Record<string, string>): Promise<ScaleFigures> {
  const deep = await deepPageOf(api, auth);
  log(
    `measuring the reads at ${ports.toLocaleString()} extra ports (matching speed=10000: ${deep.matching})`,
  );
  return {
    ports,
    byId: await measure('GET /ports/{id}', `${api}/ports/port-bench-0000001`, auth),
    first: await measure('first page', `${api}/ports?speed=10000&page_limit=100`, auth),
    deep: await measure(
      'deep page by offset',
      `${api}/ports?speed=10000&page_limit=100&page_offset=${deep.offset}`,
      auth,
    ),
    viaNext: await measure('deep page through X-Pagination-Next', deep.viaNext, auth),
  };
}

function printScale(scales: readonly ScaleFigures[]): void {
  const [base] = scales;
  // A request still unanswered after autocannon's timeout (10 s) counts as an error, not in p50.
  const cell = (figures: Figures, baseline: Figures) =>
    `${figures.requests.toFixed(0)} (${((figures.requests / baseline.requests) * 100).toFixed(0)}%, ${
      figures.errors ? `${figures.errors} errors` : `p50 ${figures.p50}`
    })`.padStart(24);
  process.stdout.write(
    `\n${'extra ports'.padEnd(12)} ${'GET /ports/{id}'.padStart(24)} ${'first page'.padStart(24)} ${'deep page, offset'.padStart(24)} ${'deep page, Next'.padStart(24)}\n`,
  );
  for (const scale of scales)
    process.stdout.write(
      `${scale.ports.toLocaleString().padEnd(12)} ${cell(scale.byId, base.byId)} ${cell(scale.first, base.first)} ${cell(scale.deep, base.deep)} ${cell(scale.viaNext, base.viaNext)}\n`,
    );
  process.stdout.write(
    `(req/s, share of the figure at ${base.ports.toLocaleString()} extra ports, p50 ms or errors; aim: by id and through Next about flat)\n`,
  );
}

async function main(): Promise<void> {
  const databaseUrl = `mysql://root@127.0.0.1:3306/ixapi_bench_${randomBytes(3).toString('hex')}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TOKEN_SIGNING_KEY: randomBytes(32).toString('base64'),
    API_SECRET_HASH_KEY: randomBytes(32).toString('base64'),
    // A POST answers once its workflow is started: the writes need a Temporal server (no worker).
    TEMPORAL_ADDRESS: process.env.TEMPORAL_ADDRESS ?? TEMPORAL_ADDRESS,
    TEMPORAL_NAMESPACE: process.env.TEMPORAL_NAMESPACE ?? BENCH_NAMESPACE,
    LOG_LEVEL: 'silent',
    PORT: '8101',
    HOST: '127.0.0.1',
    // One account sends every request: its limit is counted, as in production, but never reached.
    RATE_LIMIT_PER_ACCOUNT: '1000000/1s',
    // Every measuring connection comes from loopback: as many as a burst opens at once.
    MAX_CONNECTIONS_PER_ADDRESS: '0',
    // The write measurements order thousands of connections as one customer.
    QUOTA_PORTS: '0',
    QUOTA_OPEN_ORDERS: '0',
  };
  const children: ChildProcess[] = [];
  log(
    `preparing ${databaseUrl.split('/').pop()} with the demo exchange and ${SMALL_SCALE.toLocaleString()} extra ports`,
  );
  await ensureDatabase(databaseUrl);
  const db = openDatabase({
    url: databaseUrl,
    apiSecretHashKey: Buffer.from(env.API_SECRET_HASH_KEY!, 'base64'),
  });
  try {
    await migrate(db.sequelize);
    const credentials = await seedDemo(db);
    const [credential] = credentials;
    await addPorts(db, 0, SMALL_SCALE);
    await prepareWriteCeiling(db);

    log('building dist/ (types are not checked)');
    await build(DIST, { check: false });
    if (!process.env.TEMPORAL_ADDRESS) {
      const temporal = temporalDevServer(Number(TEMPORAL_ADDRESS.split(':')[1]));
      children.push(spawn(temporal.command, temporal.args, { stdio: 'ignore' }));
      await waitUntil('the Temporal dev server', () => temporalAnswers(TEMPORAL_ADDRESS));
    }
    // BENCH_PROFILE=1: the metered API writes a V8 CPU profile when it stops.
    const profileDir = process.env.BENCH_PROFILE
      ? mkdtempSync(path.join(tmpdir(), 'ixapi-bench-profile-'))
      : '';
    const profiled = startProcess(
      'api/main.ts',
      { ...env, METRICS_PORT: '8103' },
      profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    );
    children.push(profiled);
    children.push(startProcess('api/main.ts', { ...env, PORT: '8104', METRICS_PORT: '' }));
    const sink = await startSpanSink();
    children.push(
      startProcess('api/main.ts', {
        ...env,
        PORT: '8106',
        METRICS_PORT: '8107',
        OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      }),
    );
    children.push(startProcess('scripts/bench-ceiling.ts', { ...env, PORT: '8102' }));
    const api = 'http://127.0.0.1:8101/api/v2';
    const unmetered = 'http://127.0.0.1:8104/api/v2';
    const traced = 'http://127.0.0.1:8106/api/v2';
    await waitForUrl(`${api}/health`);
    await waitForUrl(`${unmetered}/health`);
    await waitForUrl(`${traced}/health`);
    await waitForUrl('http://127.0.0.1:8103/metrics');
    const tokenResponse = await fetch(`${api}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: credential.apiKey, api_secret: credential.apiSecret }),
    });
    const { access_token } = (await tokenResponse.json()) as { access_token: string };
    const auth = { authorization: `Bearer ${access_token}` };
    const facility = await fetch(`${api}/facilities/fac-fra-kleyer`, { headers: auth });
    await waitForUrl('http://127.0.0.1:8102/facilities/fac-fra-kleyer');
    const facilityBody = await facility.text();
    await fetch('http://127.0.0.1:8102/set', { method: 'POST', body: facilityBody });
    // Two processes sharing a port (API_PROCESSES), the API's and the ceiling's.
    children.push(
      startProcess('scripts/bench-ceiling.ts', {
        ...env,
        PORT: '8109',
        CEILING_PROCESSES: '2',
        CEILING_BODY: facilityBody,
      }),
    );
    children.push(
      startProcess('api/main.ts', { ...env, PORT: '8110', METRICS_PORT: '', API_PROCESSES: '2' }),
    );
    const twoProcesses = 'http://127.0.0.1:8110/api/v2';
    // Answers at commit: an API whose Temporal is stopped (nothing listens), and one whose Temporal is
    // 200 ms away each way.
    children.push(
      startProcess('scripts/bench-delay-proxy.ts', {
        PROXY_TARGET: env.TEMPORAL_ADDRESS,
        PROXY_DELAY_MS: String(TEMPORAL_DELAY_MS),
        PORT: '8114',
      }),
    );
    children.push(
      startProcess('api/main.ts', {
        ...env,
        PORT: '8112',
        METRICS_PORT: '',
        TEMPORAL_ADDRESS: '127.0.0.1:1',
      }),
    );
    children.push(
      startProcess('api/main.ts', {
        ...env,
        PORT: '8113',
        METRICS_PORT: '',
        TEMPORAL_ADDRESS: '127.0.0.1:8114',
      }),
    );
    const temporalStopped = 'http://127.0.0.1:8112/api/v2';
    const temporalFar = 'http://127.0.0.1:8113/api/v2';

    log(`measuring ${DURATION_SECONDS} s each with ${CONNECTIONS} connections`);
    // The first figures would otherwise pay for the API's warm-up (its JIT, pools and caches).
    await autocannon({
      url: `${api}/ports/port-bench-0000001`,
      headers: auth,
      connections: CONNECTIONS,
      duration: 5,
    });
    const scales: ScaleFigures[] = [await measureScale(SMALL_SCALE, api, auth)];
    log(`adding ports up to ${EXTRA_PORTS.toLocaleString()}`);
    await addPorts(db, SMALL_SCALE, EXTRA_PORTS);
    const { matching, offset: deepOffset, viaNext: deepViaNext } = await deepPageOf(api, auth);
    log(`ports matching speed=10000: ${matching}`);
    // The collection's ceiling: bare Express answering the first page's very body.
    const pageBody = await (await fetch(`${api}/ports?speed=10000&page_limit=100`, { headers: auth })).text();
    children.push(startProcess('scripts/bench-ceiling.ts', { ...env, PORT: '8111', CEILING_BODY: pageBody }));
    await waitForUrl('http://127.0.0.1:8111/ports');
    const results: Figures[] = [];
    const readPaired = await measurePaired(
      { name: 'ceiling: bare Express, same JSON', url: 'http://127.0.0.1:8102/facilities/fac-fra-kleyer' },
      {
        name: 'GET /facilities/{id} (authenticated)',
        url: `${api}/facilities/fac-fra-kleyer`,
        headers: auth,
      },
    );
    results.push(readPaired.ceiling, readPaired.target);
    const firstPageUrl = `${api}/ports?speed=10000&page_limit=100`;
    const pagePaired = await measurePaired(
      {
        name: `ceiling: bare Express, the same 100-item page (${(pageBody.length / 1024).toFixed(0)} KiB)`,
        url: 'http://127.0.0.1:8111/ports',
      },
      { name: 'GET /ports?speed=…&page_limit=100 (first page)', url: firstPageUrl, headers: auth },
    );
    const { ceiling: pageCeiling, target: firstPage } = pagePaired;
    results.push(firstPage);
    results.push(
      await measure(
        `GET /ports?speed=…&page_limit=100&page_offset=${deepOffset} (deep page)`,
        `${api}/ports?speed=10000&page_limit=100&page_offset=${deepOffset}`,
        auth,
      ),
    );

    results.push(await measure(`GET the same deep page through X-Pagination-Next`, deepViaNext, auth));
    scales.push({
      ports: EXTRA_PORTS,
      byId: await measure('GET /ports/{id}', `${api}/ports/port-bench-0000001`, auth),
      first: firstPage,
      deep: results[3],
      viaNext: results[4],
    });
    // After the pages' measurements: catching the statements changes a port, which ends the
    // X-Pagination-Next links handed out before.
    const plans = await explained(db, await listStatements(db, 'ports', firstPageUrl, auth));
    results.push(
      await measure(
        'GET /facilities/{id} (authenticated, no metrics)',
        `${unmetered}/facilities/fac-fra-kleyer`,
        auth,
      ),
    );
    // The metered replica's figures once more, measured after the unmetered one, so that neither
    // gains from going first on a machine whose speed drifts.
    results.push(
      await measure('GET /facilities/{id} (authenticated, again)', `${api}/facilities/fac-fra-kleyer`, auth),
    );
    results.push(
      await measure(
        'GET /facilities/{id} (authenticated, traced)',
        `${traced}/facilities/fac-fra-kleyer`,
        auth,
      ),
    );

    await waitForUrl('http://127.0.0.1:8109/facilities/fac-fra-kleyer');
    await waitForUrl(`${twoProcesses}/health`);
    const processes: Figures[] = [
      results[0],
      results[1],
      await measure(
        'ceiling: bare Express, same JSON, 2 processes',
        'http://127.0.0.1:8109/facilities/fac-fra-kleyer',
      ),
      await measure(
        'GET /facilities/{id} (authenticated, API_PROCESSES=2)',
        `${twoProcesses}/facilities/fac-fra-kleyer`,
        auth,
      ),
    ];

    // Writes last, so that the orders they leave change none of the reads above.
    const customer = credentials.find((c) => c.role === 'customer');
    if (!customer) throw new Error('the demo exchange has no customer account');
    const { api: ordering, orderBody } = await prepareOrders(api, customer, 'po-connection-fra-10g');
    const order = orderBody('api');
    const writes: Figures[] = [];
    writes.push(
      await measureWrite(
        'ceiling: bare Express, 3 inserts, then a workflow start after the answer',
        'http://127.0.0.1:8102/order',
        {},
        order,
      ),
    );
    writes.push(
      await measureWrite(
        'ceiling: bare Express, one transaction of 3 inserts (for reference)',
        'http://127.0.0.1:8102/write',
        {},
        order,
      ),
    );
    writes.push(await measureWrite('POST /connections', `${api}/connections`, ordering.headers, order));
    writes.push(
      await measureWrite(
        `POST /connections, ${BURST} at once`,
        `${api}/connections`,
        ordering.headers,
        order,
        {
          connections: BURST,
          amount: BURST,
        },
      ),
    );

    const oneOrder = await statementsOfOneWrite(db, `${unmetered}/connections`, ordering.headers, order);
    await waitForUrl(`${temporalStopped}/health`);
    await waitForUrl(`${temporalFar}/health`);
    writes.push(
      await measureWrite(
        'POST /connections, Temporal stopped',
        `${temporalStopped}/connections`,
        ordering.headers,
        order,
      ),
    );
    writes.push(
      await measureWrite(
        `POST /connections, Temporal ${TEMPORAL_DELAY_MS} ms away each way`,
        `${temporalFar}/connections`,
        ordering.headers,
        order,
      ),
    );
    // Once more with Temporal at hand, so that the two figures above sit between two of it.
    writes.push(
      await measureWrite('POST /connections, again', `${api}/connections`, ordering.headers, order),
    );

    // BENCH_SCALE=large: the reads once more with a million extra ports (their insertion takes minutes).
    if (process.env.BENCH_SCALE === 'large') {
      log(`adding ports up to ${LARGE_SCALE.toLocaleString()}`);
      await addPorts(db, EXTRA_PORTS, LARGE_SCALE);
      scales.push(await measureScale(LARGE_SCALE, api, auth));
    }

    const ceiling = results[0].requests;
    process.stdout.write('\n');
    printTable(results, ceiling);
    process.stdout.write('\n');
    printTable(writes, writes[0].requests);
    const [, read, first, deep, viaNext, unmeteredRead, readAgain, tracedRead] = results;
    const [writeCeiling, insertsOnly, orders, burst, withoutTemporal, farTemporal, ordersAgain] = writes;
    const [ceiling1, readOne, ceiling2, readTwo] = processes;
    process.stdout.write('\none API process against the ceiling in one process, then two against two:\n');
    printTable([ceiling1, readOne], ceiling1.requests);
    printTable([ceiling2, readTwo], ceiling2.requests);
    process.stdout.write(
      `\nprocesses: with API_PROCESSES=2 the authenticated read makes ${((readTwo.requests / ceiling2.requests) * 100).toFixed(0)}% of the two-process ceiling (one process: ${((readOne.requests / ceiling1.requests) * 100).toFixed(0)}% of the one-process ceiling), ${(readTwo.requests / readOne.requests).toFixed(2)}× one process's throughput; the load generator shares the machine's cores\n`,
    );
    process.stdout.write(
      `\nwrites: POST /connections makes ${((orders.requests / writeCeiling.requests) * 100).toFixed(0)}% of the write ceiling, 3 inserts and a workflow start after the answer (aim: 50% or more; ${((orders.requests / insertsOnly.requests) * 100).toFixed(0)}% of the 3 inserts alone); ${BURST} orders at once: p99 ${burst.p99} ms (aim: 1,000 ms or less), ${burst.errors} not accepted\n`,
    );
    const atHand = (orders.p99 + ordersAgain.p99) / 2;
    const p99Ratio = (figures: Figures) => (figures.p99 / Math.max(1, atHand)).toFixed(2);
    process.stdout.write(
      `\nanswers at commit: POST /connections p99 ${withoutTemporal.p99} ms with Temporal stopped (${p99Ratio(withoutTemporal)}× the ${atHand.toFixed(0)} ms with Temporal at hand, before and after), ${farTemporal.p99} ms with Temporal ${TEMPORAL_DELAY_MS} ms away (${p99Ratio(farTemporal)}×) (aim: 1.2× or less)\n`,
    );
    process.stdout.write(
      `\nthe statements of one POST /connections until its answer: ${oneOrder.request.length} sent by the API (aim: 12 or fewer), and ${oneOrder.triggered.length} its triggers ran\n${oneOrder.request.map((text) => `  ${text.slice(0, 240)}`).join('\n')}\nand after the answer, sending its workflow start: ${oneOrder.sending.length}\n${oneOrder.sending.map((text) => `  ${text.slice(0, 240)}`).join('\n')}\n`,
    );
    const metered = (read.requests + readAgain.requests) / 2;
    process.stdout.write(
      `\nauthenticated read: ${pairedShare(readPaired)} (aim: 50% or more); deep page: ${((deep.requests / first.requests) * 100).toFixed(0)}% of the first page's throughput by offset, ${((viaNext.requests / first.requests) * 100).toFixed(0)}% through X-Pagination-Next (aim: about 100%)\n`,
    );
    process.stdout.write('\ncollections against a ceiling serving the same page:\n');
    printTable([pageCeiling, first, deep, viaNext], pageCeiling.requests);
    process.stdout.write(
      `collections: the first page makes ${pairedShare(pagePaired)} serving its body (aim: 50% or more); the deep page by offset ${((deep.requests / first.requests) * 100).toFixed(0)}% of the first page (aim: 80% or more)\n`,
    );
    process.stdout.write(
      `metrics: the metered authenticated read makes ${((metered / unmeteredRead.requests) * 100).toFixed(1)}% of the unmetered one's throughput, a cost of ${(100 - (metered / unmeteredRead.requests) * 100).toFixed(1)}% (aim: under 5%)\n`,
    );
    process.stdout.write(
      `tracing: the traced authenticated read (every span exported, ${(sink.bytes() / 1e6).toFixed(1)} MB of OTLP sent) makes ${((tracedRead.requests / metered) * 100).toFixed(1)}% of the metered one's throughput\n`,
    );
    process.stdout.write('\nhow the reads of ports scale with their number:');
    printScale(scales);
    process.stdout.write(
      `\nthe statements the API runs for the first page (caught once a port changed), and how MariaDB runs them:\n${plans}`,
    );
    sink.close();
    if (profileDir) {
      const exited = new Promise((resolve) => profiled.once('exit', resolve));
      profiled.kill('SIGTERM');
      await exited;
      const [file] = readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile'));
      process.stdout.write(
        `\nwhere the metered API's busy time went over the whole run, start-up included (own time of each package or file; ${path.join(profileDir, file)}):\n`,
      );
      for (const { place, share } of selfTimeByPlace(path.join(profileDir, file), ROOT)) {
        process.stdout.write(`${`${(share * 100).toFixed(1)}%`.padStart(7)}  ${place}\n`);
      }
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await db.close();
    await dropDatabase(databaseUrl);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
