import { existsSync } from 'node:fs';
import path from 'node:path';
import type { NativeConnection, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { bundleWorkflowCode, DefaultLogger, Worker } from '@temporalio/worker';
import type { Activities } from '../activities';
import { createActivities } from '../activities';
import type { DeviceDriver } from '../drivers/contract';
import { BirdRouteServers } from '../drivers/bird/driver';
import { LabDriver } from '../drivers/lab/driver';
import { OvsDriver } from '../drivers/ovs/driver';
import { OvsFabric } from '../drivers/ovs/fabric';
import { RoutedDriver } from '../drivers/routed-driver';
import type { Supervised } from '../drivers/supervision';
import { routeServerSupervision } from '../drivers/bird/supervision';
import { ovsFabricSupervision } from '../drivers/ovs/supervision';
import { LabCloudProvider } from '../drivers/cloud/lab-provider';
import type { ProductionTimer } from '../activities/device-work';
import type { DriverCall } from '../drivers/metered-driver';
import { meterDriver } from '../drivers/metered-driver';
import type { Config, DeviceDriverName } from '../config/config';
import type { Database } from '../db';
import { catalogueRouteServers, fabricRouteServers } from '../drivers/ovs/catalogue';
import type { Tracing } from '../telemetry/tracing';
import { currentTracing } from '../telemetry/tracing';

type DriverSettings = Pick<Config, 'labDeviceLatencyMs' | 'ovsRunDir' | 'rpkiRtr'>;

/** A worker's devices: the driver its activities use, and what its supervisor looks after. */
interface DevicePlane {
  driver: DeviceDriver;
  supervised: Supervised[];
}

/**
 * The device drivers a worker can run, by the name `DEVICE_DRIVER` gives: `lab`, the fabric
 * simulated in the database, with nothing to supervise; and `ovs`, Open vSwitch bridges of the
 * fabric `npm run fabric -- up` started under `OVS_RUN_DIR` for the switches, and BIRD 2 in the
 * route-server namespaces the fabric made for the route servers (their run directories under
 * `<OVS_RUN_DIR>/bird`), checking route origins against the RPKI caches of `RPKI_RTR`. The
 * `superviseFabric` workflow looks after the fabric's processes, the rules and meters that die with
 * ovs-vswitchd, and the route servers' BIRDs, through the same driver instances the activities
 * use, so that a restart and a commit of one device never interleave.
 */
export const DEVICE_DRIVERS: Record<
  DeviceDriverName,
  (db: Database, settings: DriverSettings) => DevicePlane
> = {
  lab: (db, settings) => ({
    driver: new LabDriver(db.sequelize, { latencyMs: settings.labDeviceLatencyMs }),
    supervised: [],
  }),
  ovs: (db, settings) => {
    const fabric = new OvsFabric(path.resolve(settings.ovsRunDir));
    const switches = new OvsDriver(fabric);
    const routeServers = new BirdRouteServers(
      fabric.birdDir,
      catalogueRouteServers(db.fabricCatalogue),
      {},
      settings.rpkiRtr,
    );
    return {
      driver: new RoutedDriver({ switches, routeServers, isRouteServer: routeServerLookup(db) }),
      supervised: [
        ovsFabricSupervision(switches),
        routeServerSupervision(routeServers, async () =>
          (await fabricRouteServers(db.fabricCatalogue)).map((server) => server.feature),
        ),
      ],
    };
  },
};

/**
 * Whether a device is a route server of the catalogue (a network feature), asked of the database
 * once per device: the fabric's switches hold no BGP sessions, the route servers' BIRDs do.
 */
function routeServerLookup(db: Database): (device: string) => Promise<boolean> {
  const known = new Map<string, boolean>();
  return async (device) => {
    const cached = known.get(device);
    if (cached !== undefined) return cached;
    const isRouteServer = (await db.fabricCatalogue.routeServer(device)) !== undefined;
    known.set(device, isRouteServer);
    return isRouteServer;
  };
}

/**
 * The worker's activities over one database; devices are those of the driver `deviceDriver` names
 * (the lab's unless set), cloud providers the lab's. With `metrics` (the worker's), every
 * device-driver call is timed and reported, and so is each resource's way to production.
 */
export function activitiesFor(
  db: Database,
  settings: Pick<Config, 'labCrossConnectDelayMs' | 'labDeviceLatencyMs'> &
    Partial<Pick<Config, 'deviceDriver' | 'ovsRunDir' | 'rpkiRtr'>>,
  metrics?: { observeDriverCall: (call: DriverCall) => void; timeProduction: ProductionTimer },
): Activities {
  const { driver, supervised } = DEVICE_DRIVERS[settings.deviceDriver ?? 'lab'](db, {
    labDeviceLatencyMs: settings.labDeviceLatencyMs,
    ovsRunDir: settings.ovsRunDir ?? '.data/ovs',
    rpkiRtr: settings.rpkiRtr ?? [],
  });
  return createActivities({
    accounts: db.accounts,
    connections: db.connections,
    networkServices: db.networkServices,
    networkServiceConfigs: db.networkServiceConfigs,
    networkFeatureConfigs: db.networkFeatureConfigs,
    traffic: db.traffic,
    deviceHoldings: db.deviceHoldings,
    driver: meterDriver(driver, metrics?.observeDriverCall),
    supervised,
    cloudProvider: new LabCloudProvider(db.sequelize),
    clock: () => new Date(),
    crossConnectDelayMs: settings.labCrossConnectDelayMs,
    timeProduction: metrics?.timeProduction,
  });
}

/**
 * The workflows bundled at build time (`npm run build` writes both beside the compiled worker): with
 * the tracing interceptors, for a worker that exports traces, and without them. A worker started
 * from source has neither and bundles the workflows itself when it starts.
 */
export const WORKFLOW_BUNDLES = { traced: 'workflow-bundle-traced.js', untraced: 'workflow-bundle.js' };

/** The file name of the bundle a worker that does (or does not) export traces runs. */
export const workflowBundleFile = (traced: boolean) =>
  traced ? WORKFLOW_BUNDLES.traced : WORKFLOW_BUNDLES.untraced;

/**
 * The workflow interceptors a traced worker runs every workflow with: they read the trace context
 * the starter put in the headers, and pass it on to activities, so that a workflow's spans join the
 * request's trace. Each workflow evaluates them and the OpenTelemetry SDK they import on its own
 * (modules a workflow imports are its own), which about doubles what a workflow costs in memory and
 * CPU; a worker that exports no traces therefore runs its workflows without them. They add no
 * command to a workflow's history, so a run begun with them replays without them and the other way
 * round (test/workflows/tracing-switch.test.ts), and tracing can be turned on or off between
 * restarts with runs in flight.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

const interceptorModules = (traced: boolean) => (traced ? WORKFLOW_INTERCEPTOR_MODULES : []);

/**
 * The workflows bundled as a worker runs them, with WORKFLOW_INTERCEPTOR_MODULES when `traced` (the
 * default): from `workflowsPath` (the build's compiled workflows), or from the source.
 */
export function bundleWorkflows(
  workflowsPath: string = require.resolve('../workflows'),
  { traced = true }: { traced?: boolean } = {},
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: interceptorModules(traced),
    logger: new DefaultLogger('WARN'),
  });
}

function workflowCode(
  traced: boolean,
):
  | { workflowBundle: { codePath: string } }
  | { workflowsPath: string; interceptors: { workflowModules: string[] } } {
  const bundle = path.join(__dirname, workflowBundleFile(traced));
  return existsSync(bundle)
    ? { workflowBundle: { codePath: bundle } }
    : {
        workflowsPath: require.resolve('../workflows'),
        interceptors: { workflowModules: interceptorModules(traced) },
      };
}

/** A worker for the provisioning task queue, running the workflows of workflows/ and the given activities. */
export async function createWorker(options: {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: Activities;
  /**
   * After a shutdown signal, how long running activities may take to finish before they are
   * cancelled (and retried by another worker); no new tasks are taken meanwhile.
   */
  shutdownGraceMs?: number;
  /** Workflows kept cached between their tasks (the SDK's default follows the heap size: thousands). */
  cachedWorkflows?: number;
  /** Where workflow and activity spans go; the process's tracing by default (off unless configured). */
  tracing?: Tracing;
  /**
   * The workflows bundled already (`bundleWorkflows`), for a process that starts many workers; by
   * default the build's bundle, or the workflows bundled now: traced when `tracing` is enabled.
   */
  workflowBundle?: { code: string };
}): Promise<Worker> {
  const tracing = options.tracing ?? currentTracing();
  const code = options.workflowBundle
    ? { workflowBundle: options.workflowBundle }
    : workflowCode(tracing.enabled);
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    ...code,
    interceptors: {
      ...('interceptors' in code ? code.interceptors : {}),
      activity: [
        (context) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(context),
          outbound: new OpenTelemetryActivityOutboundInterceptor(context),
        }),
      ],
    },
    // Workflows cannot export spans themselves: they hand them to this sink, outside the sandbox.
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
    activities: options.activities,
    shutdownGraceTime: options.shutdownGraceMs ?? 0,
    maxCachedWorkflows: options.cachedWorkflows,
  });
}
