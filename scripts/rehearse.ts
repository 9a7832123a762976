import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { QueryTypes } from 'sequelize';
import { createLabStore } from '../drivers/lab/store';
import { openDatabase } from '../db';
import { dropDatabase } from '../db/connection';
import { seedDemo } from '../db/seed';
import type { DemoCredential } from '../db/seed/demo';
import { build } from './build';
import { DATA_DIR, PROJECT_ROOT } from './local-secrets';
import type { Verdict } from './rehearsal/checks';
import {
  answeredRequests,
  bookedOnce,
  outboxDrained,
  placedOnce,
  workflowsHealthy,
} from './rehearsal/checks';
import type { Member } from './rehearsal/fleet';
import { kill, ready, startMember, stopGracefully } from './rehearsal/fleet';
import type { TemporalSetup } from './rehearsal/temporal-server';
import {
  createSchemas,
  dropSchemas,
  installTemporalServer,
  registerNamespace,
  startTemporalServer,
  temporalAddress,
  temporalServes,
} from './rehearsal/temporal-server';
import { Balancer, isAnswer, placeOrder, requestUnderWay } from './rehearsal/traffic';
import { freePort, postgresUp, sleep, temporalPortBase } from './rehearsal/machine';
import { connectionPlan, decommission } from './rehearsal/orders';
import type { NodeDown } from './rehearsal/galera';
import {
  answeredAroundNodeDown,
  clusterConsistent,
  conflictsRetried,
  deliveredOnce,
  KILLED_NODE,
  membersOn,
  NODE_OF,
  startRehearsalCluster,
} from './rehearsal/galera';
import type { GaleraCluster } from './rehearsal/galera-cluster';
import { phase, report, say } from './rehearsal/phases';

/**
 * `npm run rehearse`: the production topology on this machine. The real Temporal server on
 * PostgreSQL, two API replicas and two workers started from the compiled build on MariaDB, and
 * orders flowing through them while a worker and an API are killed, both are replaced by a freshly
 * built version (a rolling upgrade), and Temporal is stopped for a while. At the end everything is
 * decommissioned, and the run asserts that nothing was lost, doubled or left behind.
 *
 * With --galera (`npm run rehearse:galera`) the database is a Galera cluster of three nodes
 * (scripts/rehearsal/galera.ts) with the APIs and workers spread over them, and the disruption is
 * one node killed (SIGKILL) while orders flow and started again; the checks add the cluster whole
 * again, every node with the same rows, and no 5xx but 503s with Retry-After from a replica whose
 * node was down.
 *
 * Options: --orders N (300; a quarter connections, each then carrying three exchange-LAN configs),
 * --rate N (orders started per second, 5), --outage S (seconds Temporal is down, 20), --node-down S
 * (seconds the Galera node stays down, 20).
 */

const argument = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(`--${name}`);
  const value = at === -1 ? fallback : Number(process.argv[at + 1]);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} takes a positive whole number`);
  return value;
};
const ORDERS = argument('orders', 300);
const RATE = argument('rate', 5);
const OUTAGE_S = argument('outage', 20);
const GALERA = process.argv.includes('--galera');
const NODE_DOWN_S = argument('node-down', 20);
const CONFIGS_PER_CONNECTION = 3;
const CONNECTIONS = Math.ceil(ORDERS / (CONFIGS_PER_CONNECTION + 1));
const CONFIGS = ORDERS - CONNECTIONS;
const LANES = 16;
const HELD_FOR_OUTAGE = Math.min(8, Math.floor(CONNECTIONS / 4));
const SHUTDOWN_S = 20;

const RUN = randomBytes(3).toString('hex');
const REF = `rehearsal-${RUN}`;
const WORK = path.join(DATA_DIR, 'rehearsal');
const NEXT_BUILD = path.join(WORK, 'next');
const DATABASE = 'ixapi_rehearsal';
const LOCAL_DATABASE_URL = process.env.REHEARSAL_DATABASE_URL ?? `mysql://root@127.0.0.1:3306/${DATABASE}`;
/** Only metros whose cross-connects the exchange makes: nothing waits for a customer there. */
const METROS = ['fra', 'ham'];

interface Live {
  temporal: TemporalSetup;
  temporalProcess?: ChildProcess;
  members: Member[];
  /** The Galera cluster, with --galera. */
  cluster?: GaleraCluster;
  /** The service's database, as the rehearsal itself and migrations reach it. */
  databaseUrl: string;
}

async function main(): Promise<void> {
  rmSync(WORK, { recursive: true, force: true });
  mkdirSync(WORK, { recursive: true });
  const live: Live = {
    temporal: {
      binaries: '',
      portBase: 0,
      database: 'ixapi_rehearsal_temporal',
      visibilityDatabase: 'ixapi_rehearsal_visibility',
      namespace: 'ixapi',
      logFile: path.join(WORK, 'temporal.log'),
    },
    members: [],
    databaseUrl: LOCAL_DATABASE_URL,
  };
  say(
    `${ORDERS} orders (${CONNECTIONS} connections, ${CONFIGS} exchange-LAN configs), logs in ${path.relative(PROJECT_ROOT, WORK)}/`,
  );
  let passed = false;
  try {
    passed = await rehearse(live);
  } finally {
    await Promise.all(live.members.map((member) => stopGracefully(member, 5000).catch(() => undefined)));
    const server = live.temporalProcess;
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
    // The nodes stop whatever the outcome; their data and logs stay in the rehearsal's folder.
    await live.cluster?.stop();
  }
  if (!passed) {
    process.exitCode = 1;
    return;
  }
  // A run that passed leaves nothing behind but its logs; a failed one keeps its databases to look at.
  dropSchemas(live.temporal);
  if (!live.cluster) await dropDatabase(live.databaseUrl);
}

/** Answers whether every check passed. */
async function rehearse(live: Live): Promise<boolean> {
  const { temporal } = live;
  // The demo credentials are seeded here and verified by the APIs: one key for both.
  const apiSecretHashKey = randomBytes(48);
  const env = await phase('prepare: Temporal server, builds, databases', async () => {
    await postgresUp();
    temporal.binaries = installTemporalServer();
    say(GALERA ? 'building dist/' : 'building dist/ and, for the rolling upgrade, the next version');
    await build();
    if (!GALERA) {
      await build(NEXT_BUILD);
      // The next version says so in its release id (GET /health).
      writeFileSync(
        path.join(NEXT_BUILD, 'package.json'),
        JSON.stringify({ name: 'ixapi-provisioning', version: `0.1.0-next.${RUN}` }),
      );
    }
    temporal.portBase = await temporalPortBase();
    createSchemas(temporal);
    live.temporalProcess = startTemporalServer(temporal);
    await registerNamespace(temporal);
    say(
      `Temporal ${path.basename(path.dirname(temporal.binaries))} serves on ${temporalAddress(temporal)} (PostgreSQL)`,
    );

    // Secrets as files, as Docker and Kubernetes mount them.
    const secrets = path.join(WORK, 'secrets');
    mkdirSync(secrets, { mode: 0o700 });
    writeFileSync(path.join(secrets, 'token_signing_key'), `${randomBytes(48).toString('base64')}\n`, {
      mode: 0o600,
    });
    writeFileSync(path.join(secrets, 'api_secret_hash_key'), `${apiSecretHashKey.toString('base64')}\n`, {
      mode: 0o600,
    });
    if (GALERA) {
      say('starting a Galera cluster of three nodes');
      const cluster = await startRehearsalCluster(path.join(WORK, 'galera'));
      live.cluster = cluster;
      live.databaseUrl = cluster.url(0, DATABASE);
      // One file per node: each member reads the one of its node (NODE_OF).
      for (let node = 0; node < cluster.size; node += 1)
        writeFileSync(
          path.join(secrets, `database_url_node${node + 1}`),
          `${cluster.url(node, DATABASE)}\n`,
          {
            mode: 0o600,
          },
        );
      say(`the cluster is synced: ${cluster.size} nodes, migrations through node 1`);
    }
    writeFileSync(path.join(secrets, 'database_url'), `${live.databaseUrl}\n`, { mode: 0o600 });
    const processEnv: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      DATABASE_URL_FILE: path.join(secrets, 'database_url'),
      TOKEN_SIGNING_KEY_FILE: path.join(secrets, 'token_signing_key'),
      API_SECRET_HASH_KEY_FILE: path.join(secrets, 'api_secret_hash_key'),
      TEMPORAL_ADDRESS: temporalAddress(temporal),
      TEMPORAL_NAMESPACE: temporal.namespace,
      LOG_LEVEL: 'info',
      LAB_CROSS_CONNECT_DELAY_MS: '500',
      STATS_SAMPLE_INTERVAL_S: '60',
      SHUTDOWN_TIMEOUT: `${SHUTDOWN_S}s`,
      DATABASE_POOL_MAX: '10',
      // Two customers place every order: quotas that hold however many --orders asks for.
      QUOTA_PORTS: String(CONNECTIONS),
      QUOTA_OPEN_ORDERS: String(ORDERS),
    };
    await dropDatabase(live.databaseUrl);
    execFileSync(process.execPath, [path.join(PROJECT_ROOT, 'dist/scripts/migrate.js')], {
      env: processEnv,
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return processEnv;
  });

  const db = openDatabase({ url: live.databaseUrl, apiSecretHashKey: new Uint8Array(apiSecretHashKey) });
  const connection = await Connection.connect({ address: temporalAddress(temporal) });
  const client = new Client({ connection, namespace: temporal.namespace });
  try {
    const credentials = await seedDemo(db);
    await createLabStore(db.sequelize).syncFromCatalogue();
    return await fleetRehearsal(live, env, db, client, credentials);
  } finally {
    await connection.close();
    await db.close();
  }
}

async function fleetRehearsal(
  live: Live,
  env: NodeJS.ProcessEnv,
  db: ReturnType<typeof openDatabase>,
  client: Client,
  credentials: DemoCredential[],
): Promise<boolean> {
  const balancer = new Balancer();
  /** Each member's metrics, with --galera (where the conflicts it ran again are read). */
  const metrics = new Map<string, string>();
  const start = async (name: string, role: 'api' | 'worker', buildDir: string) => {
    let memberEnv = env;
    if (live.cluster) {
      const metricsPort = await freePort();
      metrics.set(name, `http://127.0.0.1:${metricsPort}/metrics`);
      const secrets = path.dirname(env.DATABASE_URL_FILE!);
      memberEnv = {
        ...env,
        DATABASE_URL_FILE: path.join(secrets, `database_url_node${NODE_OF[name] + 1}`),
        METRICS_PORT: String(metricsPort),
      };
    }
    const member = startMember({
      name,
      role,
      build: buildDir,
      env: memberEnv,
      logDir: WORK,
      port: role === 'api' ? await freePort() : undefined,
    });
    live.members.push(member);
    await ready(member);
    if (member.url) balancer.add({ name, url: member.url });
    return member;
  };
  const dist = path.join(PROJECT_ROOT, 'dist');
  const spread = live.cluster
    ? `, on nodes ${Object.values(NODE_OF)
        .map((node) => node + 1)
        .join(', ')}`
    : '';
  const [api1, api2, worker1, worker2] = await phase(
    `start two APIs and two workers from dist/${spread}`,
    () =>
      Promise.all([
        start('api-1', 'api', dist),
        start('api-2', 'api', dist),
        start('worker-1', 'worker', dist),
        start('worker-2', 'worker', dist),
      ]),
  );

  // The two demo customers order, in turn.
  const customers = credentials.filter((credential) => credential.role === 'customer');
  const tokens = new Map<string, string>();
  for (const customer of customers) {
    const answer = await balancer.call('POST', '/auth/token', {
      body: { api_key: customer.apiKey, api_secret: customer.apiSecret },
    });
    if (!isAnswer(answer) || answer.status !== 201) throw new Error(`${customer.name} could not log in`);
    tokens.set(customer.accountId, (answer.body as { access_token: string }).access_token);
  }
  const slug = (account: string) => account.replace(/^acc-/, '');
  const plan = await connectionPlan(db.sequelize, METROS, CONNECTIONS);

  const refs: string[] = [];
  // Configs go first once their connection is live; connections fill the gaps, so that some are
  // ordered while Temporal is down too.
  const connectionOrders: Array<() => Promise<void>> = [];
  const configOrders: Array<() => Promise<void>> = [];
  const nextOrder = () => configOrders.shift() ?? connectionOrders.shift();
  let accepted = 0;
  const connectionsOrdered: Array<{ id: string; account: string; metro: string; index: number }> = [];
  plan.forEach((metro, index) => {
    const account = customers[index % customers.length].accountId;
    const ref = `${REF}-c${String(index).padStart(3, '0')}`;
    refs.push(ref);
    connectionOrders.push(async () => {
      const id = await placeOrder(balancer, tokens.get(account)!, '/connections', {
        managing_account: account,
        consuming_account: account,
        billing_account: account,
        role_assignments: [`ra-${slug(account)}-implementation`, `ra-${slug(account)}-noc`],
        product_offering: `po-connection-${metro}-10g`,
        mode: 'standalone',
        port_quantity: 1,
        subscriber_side_demarcs: [`rehearsal rack ${index}`],
        external_ref: ref,
      });
      connectionsOrdered.push({ id, account, metro, index });
      accepted += 1;
    });
  });
  // A few connections are ordered while Temporal is down: the API takes them all the same.
  const heldForTheOutage = connectionOrders.splice(-HELD_FOR_OUTAGE);
  // Configs follow their connection once it is in production (it must carry them).
  let configsQueued = 0;
  const queuedFor = new Set<string>();
  const queueConfigs = async () => {
    const ids = connectionsOrdered.filter((c) => !queuedFor.has(c.id)).map((c) => c.id);
    if (ids.length === 0) return;
    const inProduction = new Set(
      (
        await db.sequelize.query<{ id: string }>(
          "SELECT id FROM connections WHERE id IN (:ids) AND state = 'production'",
          { replacements: { ids }, type: QueryTypes.SELECT },
        )
      ).map((row) => row.id),
    );
    for (const c of connectionsOrdered) {
      if (!inProduction.has(c.id) || queuedFor.has(c.id)) continue;
      queuedFor.add(c.id);
      for (let k = 0; k < CONFIGS_PER_CONNECTION && configsQueued < CONFIGS; k += 1) {
        const n = configsQueued++;
        const ref = `${REF}-n${String(n).padStart(3, '0')}`;
        refs.push(ref);
        configOrders.push(async () => {
          await placeOrder(balancer, tokens.get(c.account)!, '/network-service-configs', {
            type: 'exchange_lan',
            network_service: `ns-exchange-lan-${c.metro}`,
            managing_account: c.account,
            consuming_account: c.account,
            billing_account: c.account,
            role_assignments: [`ra-${slug(c.account)}-noc`, `ra-${slug(c.account)}-peering`],
            connection: c.id,
            vlan_config: { vlan_type: 'dot1q' },
            asns: [64512 + c.index],
            listed: false,
            external_ref: ref,
          });
          accepted += 1;
        });
      }
    }
  };

  const killed = { api: api1.name, at: 0, dead: 0 };
  const stopped = { api: api2.name, at: 0 };
  const health: Array<{ api: string; at: number; status: string }> = [];
  const outage = { from: 0, to: 0 };
  const disruptions = async () => {
    const reach = async (share: number) => {
      while (accepted < ORDERS * share) await sleep(100);
    };
    await reach(0.25);
    say(`crash at ${accepted} accepted: SIGKILL ${worker1.name} and ${api1.name}`);
    killed.at = Date.now();
    await Promise.all([kill(worker1), kill(api1)]);
    killed.dead = Date.now();
    await Promise.all([start('api-1b', 'api', NEXT_BUILD), start('worker-1b', 'worker', NEXT_BUILD)]);
    say('api-1b and worker-1b of the next version serve');

    await reach(0.45);
    say(`rolling upgrade at ${accepted} accepted: SIGTERM ${api2.name} and ${worker2.name}`);
    // Requests under way when the signal comes must still be answered.
    const underWay = Array.from({ length: 3 }, () =>
      requestUnderWay(balancer, { name: api2.name, url: api2.url! }),
    );
    await sleep(300);
    stopped.at = Date.now();
    const stopping = Promise.all([
      stopGracefully(api2, (SHUTDOWN_S + 10) * 1000),
      stopGracefully(worker2, (SHUTDOWN_S + 10) * 1000),
    ]);
    await sleep(1000);
    await Promise.all(underWay.map((request) => request.finish()));
    const [apiExit, workerExit] = await stopping;
    balancer.remove(api2.name);
    if (apiExit !== 0 || workerExit !== 0)
      throw new Error(
        `graceful stop failed: ${api2.name} exited ${apiExit}, ${worker2.name} exited ${workerExit}`,
      );
    say(`${api2.name} and ${worker2.name} stopped cleanly (exit 0)`);
    await Promise.all([start('api-2b', 'api', NEXT_BUILD), start('worker-2b', 'worker', NEXT_BUILD)]);
    say('api-2b and worker-2b of the next version serve; the old version is gone');

    await reach(0.65);
    say(`Temporal outage at ${accepted} accepted: the server stops for ${OUTAGE_S} s`);
    const server = live.temporalProcess!;
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    outage.from = Date.now();
    connectionOrders.push(...heldForTheOutage);
    const outageEnds = outage.from + OUTAGE_S * 1000;
    while (Date.now() < outageEnds) {
      for (const member of live.members.filter((m) => m.url && balancer.names.includes(m.name))) {
        const response = await fetch(`${member.url}/health`, { signal: AbortSignal.timeout(5000) });
        const body = (await response.json()) as { status?: string };
        health.push({ api: member.name, at: Date.now(), status: `${response.status} ${body.status}` });
      }
      await sleep(1000);
    }
    outage.to = Date.now();
    live.temporalProcess = startTemporalServer(live.temporal);
    await temporalServes(live.temporal);
    say('Temporal serves again');
  };

  const down: NodeDown = { node: KILLED_NODE, from: 0, to: 0, members: membersOn(KILLED_NODE) };
  const nodeDown = async (cluster: GaleraCluster) => {
    while (accepted < ORDERS * 0.3) await sleep(100);
    say(
      `SIGKILL node ${down.node + 1} at ${accepted} accepted: ${down.members.join(' and ')} lose their database`,
    );
    down.from = Date.now();
    await cluster.kill(down.node);
    connectionOrders.push(...heldForTheOutage);
    await cluster.waitForSize(cluster.size - 1);
    say(
      `the other nodes go on as a cluster of ${cluster.size - 1}; node ${down.node + 1} stays down ${NODE_DOWN_S} s`,
    );
    await sleep(down.from + NODE_DOWN_S * 1000 - Date.now());
    down.joinedBy = await cluster.restart(down.node);
    down.to = Date.now();
    say(`node ${down.node + 1} is back at ${accepted} accepted, given what it missed by ${down.joinedBy}`);
  };

  const ordering = phase(
    `orders: ${ORDERS} at ${RATE}/s through the replicas, with the disruptions`,
    async () => {
      const gap = 1000 / RATE;
      let nextStart = Date.now();
      let failure: Error | undefined;
      const lane = async () => {
        while (accepted < ORDERS && !failure) {
          const task = nextOrder();
          if (!task) {
            await sleep(100);
            continue;
          }
          const wait = nextStart - Date.now();
          nextStart = Math.max(nextStart, Date.now()) + gap;
          if (wait > 0) await sleep(wait);
          await task().catch((error: unknown) => {
            failure = error instanceof Error ? error : new Error(String(error));
          });
        }
      };
      const feeding = (async () => {
        while (accepted < ORDERS && !failure) {
          await queueConfigs();
          await sleep(250);
        }
      })();
      const progress = setInterval(() => say(`${accepted}/${ORDERS} orders accepted`), 10_000);
      try {
        const disrupting = live.cluster ? nodeDown(live.cluster) : disruptions();
        await Promise.all([...Array.from({ length: LANES }, lane), feeding, disrupting]);
      } finally {
        clearInterval(progress);
      }
      if (failure) throw failure;
    },
  );
  await ordering;

  await phase('production: every order goes live', async () => {
    const like = `${REF}-%`;
    for (;;) {
      const [row] = await db.sequelize.query<{ live: number; errors: number }>(
        `SELECT (SELECT COUNT(*) FROM connections WHERE external_ref LIKE :like AND state = 'production')
              + (SELECT COUNT(*) FROM network_service_configs WHERE external_ref LIKE :like AND state = 'production') AS live,
                (SELECT COUNT(*) FROM connections WHERE external_ref LIKE :like AND state IN ('error', 'operator'))
              + (SELECT COUNT(*) FROM network_service_configs WHERE external_ref LIKE :like AND state IN ('error', 'operator')) AS errors`,
        { replacements: { like }, type: QueryTypes.SELECT },
      );
      if (Number(row.errors) > 0) throw new Error(`${row.errors} orders are in error or operator`);
      if (Number(row.live) === ORDERS) return;
      say(`${row.live}/${ORDERS} in production`);
      await sleep(5000);
    }
  });

  const verdicts: Verdict[] = [];
  verdicts.push(...(await placedOnce(db.sequelize, refs, `${REF}-%`)));
  verdicts.push(...(await bookedOnce(db.sequelize, `${REF}-%`)));
  // What the disruptions of a rehearsal on one database must leave (on Galera, see below).
  if (!live.cluster) {
    const warned = new Set(health.filter((h) => h.status === '200 warn').map((h) => h.api));
    verdicts.push({
      check: '/health answers 200 warn on every API while Temporal is down',
      ok: health.length > 0 && health.every((h) => h.status === '200 warn') && warned.size === 2,
      detail: `${health.length} samples, warn from ${[...warned].join(', ') || 'none'}${
        health.some((h) => h.status !== '200 warn')
          ? `; also ${[...new Set(health.map((h) => h.status))].join(', ')}`
          : ''
      }`,
    });
    const takenMeanwhile = balancer.exchanges.filter(
      (e) => e.method === 'POST' && e.status === 201 && e.startedAt >= outage.from && e.endedAt <= outage.to,
    );
    const slowest = Math.max(0, ...takenMeanwhile.map((e) => e.endedAt - e.startedAt));
    verdicts.push({
      check: 'orders are taken while Temporal is down',
      ok: takenMeanwhile.length > 0,
      detail: `${takenMeanwhile.length} orders answered 201 during the ${OUTAGE_S} s outage, the slowest in ${slowest} ms (answered at commit: aim under 500 ms)`,
    });
    const releases = new Set<string>();
    for (let i = 0; i < balancer.names.length * 2; i += 1) {
      const answer = await balancer.call('GET', '/health');
      const body = isAnswer(answer) ? (answer.body as { status?: string; releaseId?: string }) : undefined;
      if (body) releases.add(`${body.status} ${body.releaseId}`);
    }
    verdicts.push({
      check: 'every API runs the next version and passes its health check',
      ok: [...releases].every((release) => release === `pass 0.1.0-next.${RUN}`),
      detail: [...releases].join(', '),
    });
  }

  await phase('decommission: configs, then connections', () =>
    decommission(db.sequelize, balancer, client, tokens, `${REF}-%`),
  );

  await phase('settle: outbox and workflows', async () => {
    for (let i = 0; i < 60; i += 1) {
      if ((await db.outbox.backlog()).undelivered === 0) break;
      await sleep(1000);
    }
    // Workflows end once their resource is decommissioned; visibility follows within seconds.
    for (let i = 0; i < 30; i += 1) {
      const running = (await client.workflow.count('ExecutionStatus = "Running"')).count;
      if (running <= 1) break;
      await sleep(1000);
    }
  });
  verdicts.push(await outboxDrained(db.sequelize));
  verdicts.push(...(await workflowsHealthy(client)));
  if (!live.cluster) verdicts.push(...answeredRequests(balancer.exchanges, killed, stopped));
  else {
    verdicts.push(...answeredAroundNodeDown(balancer.exchanges, down), deliveredOnce(WORK));
    verdicts.push(await conflictsRetried(metrics));
    const cluster = live.cluster;
    await phase('cluster: the fleet stops, the nodes are compared', async () => {
      await Promise.all(live.members.map((member) => stopGracefully(member, (SHUTDOWN_S + 10) * 1000)));
      verdicts.push(...(await clusterConsistent(cluster, DATABASE)));
    });
  }

  writeFileSync(path.join(WORK, 'requests.json'), JSON.stringify(balancer.exchanges, null, 1));
  report(verdicts, balancer.exchanges.length, path.relative(PROJECT_ROOT, WORK));
  return verdicts.every((verdict) => verdict.ok);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `\nrehearsal failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.stderr.write(`logs in ${path.relative(PROJECT_ROOT, WORK)}/\n`);
  process.exit(1);
});
