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
import { LabDriver } from '../drivers/lab';
import { LabCloudProvider } from '../drivers/lab-cloud';
import type { ProductionTimer } from '../activities/device-work';
import type { DriverCall } from '../drivers/metered-driver';
import { meterDriver } from '../drivers/metered-driver';
import type { Config } from '../config/config';
import type { Database } from '../db';
import type { Tracing } from '../telemetry/tracing';
import { currentTracing } from '../telemetry/tracing';

/**
 * The worker's activities over one database; devices and cloud providers are the lab's. With
 * `metrics` (the worker's), every device-driver call is timed and reported, and so is each
 * resource's way to production.
 */
export function activitiesFor(
  db: Database,
  settings: Pick<Config, 'labCrossConnectDelayMs' | 'labDeviceLatencyMs'>,
  metrics?: { observeDriverCall: (call: DriverCall) => void; timeProduction: ProductionTimer },
): Activities {
  const driver = new LabDriver(db.sequelize, { latencyMs: settings.labDeviceLatencyMs });
  return createActivities({
    accounts: db.accounts,
    connections: db.connections,
    networkServices: db.networkServices,
    networkServiceConfigs: db.networkServiceConfigs,
    networkFeatureConfigs: db.networkFeatureConfigs,
    traffic: db.traffic,
    driver: meterDriver(driver, metrics?.observeDriverCall),
    cloudProvider: new LabCloudProvider(db.sequelize),
    clock: () => new Date(),
    crossConnectDelayMs: settings.labCrossConnectDelayMs,
    timeProduction: metrics?.timeProduction,
  });
}

/**
 * The workflows bundled at build time (`npm run build` writes it beside the compiled worker). A
 * worker started from source has none and bundles the workflows itself when it starts.
 */
export const WORKFLOW_BUNDLE = 'workflow-bundle.js';

/**
 * The workflow interceptors every workflow runs with: they read the trace context the starter put
 * in the headers, and pass it on to activities, so that a workflow's spans join the request's trace.
 * `npm run build` bundles them with the workflows.
 */
export const WORKFLOW_INTERCEPTOR_MODULES = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/**
 * The workflows bundled as every worker runs them, with WORKFLOW_INTERCEPTOR_MODULES: from
 * `workflowsPath` (the build's compiled workflows), or from the source.
 */
export function bundleWorkflows(
  workflowsPath: string = require.resolve('../workflows'),
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: new DefaultLogger('WARN'),
  });
}

function workflowCode():
  | { workflowBundle: { codePath: string } }
  | { workflowsPath: string; interceptors: { workflowModules: string[] } } {
  const bundle = path.join(__dirname, WORKFLOW_BUNDLE);
  return existsSync(bundle)
    ? { workflowBundle: { codePath: bundle } }
    : {
        workflowsPath: require.resolve('../workflows'),
        interceptors: { workflowModules: WORKFLOW_INTERCEPTOR_MODULES },
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
   * The workflows bundled already (with WORKFLOW_INTERCEPTOR_MODULES), for a process that starts
   * many workers; by default the build's bundle, or the workflows bundled now.
   */
  workflowBundle?: { code: string };
}): Promise<Worker> {
  const tracing = options.tracing ?? currentTracing();
  const code = options.workflowBundle ? { workflowBundle: options.workflowBundle } : workflowCode();
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
