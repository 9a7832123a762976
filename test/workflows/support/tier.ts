import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { currentTracing } from '../../../telemetry/tracing';
import { bundleWorkflows } from '../../../worker/create-worker';
import { accountChangedSignal } from '../../../workflows/account-onboarding';
import { crossConnectCompletedSignal } from '../../../workflows/connection-provisioning';
import {
  decommissionNowSignal,
  reconsiderSignal,
  retryProvisioningSignal,
  retryTestingSignal,
} from '../../../workflows/lifecycle';
import { startDevServer } from '../../support/temporal-dev-server';
import { eventually as waitFor } from '../../support/wait';
import type { FakeActivities } from './fakes';

/** The namespace the tier's dev server registers (with the project's search attributes). */
const NAMESPACE = 'ixapi';

/** Where the tier's processes find the server and the bundle (set by the global setup, inherited). */
const ADDRESS = 'IXAPI_WORKFLOW_TIER_ADDRESS';
const BUNDLE = 'IXAPI_WORKFLOW_TIER_BUNDLE';
const UNTRACED_BUNDLE = 'IXAPI_WORKFLOW_TIER_UNTRACED_BUNDLE';

let server: { env: TestWorkflowEnvironment; folder: string } | undefined;

/**
 * Once for the whole tier (mocha's global setup, in the main process): a Temporal dev server, and
 * the workflows bundled as the worker bundles them (with the tracing interceptors) into a file that
 * every test's worker runs, and without them into another for the tests that switch tracing. Test
 * processes find them through the environment.
 */
export async function startServer(): Promise<void> {
  installRuntime();
  const folder = mkdtempSync(path.join(tmpdir(), 'ixapi-workflows-'));
  const [env, bundle, untraced] = await Promise.all([
    startDevServer({
      namespace: NAMESPACE,
      // Timers fire when due rather than up to a second later, which decommission days and
      // activity retries wait on.
      extraArgs: ['--dynamic-config-value', 'history.timerProcessorMaxTimeShift="10ms"'],
    }),
    bundleWorkflows(require.resolve('./workflows')),
    bundleWorkflows(require.resolve('./workflows'), { traced: false }),
  ]);
  const codePath = path.join(folder, 'workflow-bundle-traced.js');
  const untracedPath = path.join(folder, 'workflow-bundle.js');
  writeFileSync(codePath, bundle.code);
  writeFileSync(untracedPath, untraced.code);
  server = { env, folder };
  process.env[ADDRESS] = env.address;
  process.env[BUNDLE] = codePath;
  process.env[UNTRACED_BUNDLE] = untracedPath;
}

export async function stopServer(): Promise<void> {
  const running = server;
  server = undefined;
  if (!running) return;
  try {
    await running.env.teardown();
  } finally {
    rmSync(running.folder, { recursive: true, force: true });
  }
}

/**
 * The tier runs at a low priority beside the integration tier, where a workflow task can wait for a
 * core longer than the 5 s the SDK gives it, and a task cut off for that is only retried seconds
 * later. The SDK takes a longer allowance among its worker options though it does not declare it
 * (`isolateExecutionTimeout`, in WorkerOptionsWithDefaults); an SDK without it ignores it.
 */
const SLOW_MACHINE: object = { isolateExecutionTimeout: '60s' };

let connected:
  { native: NativeConnection; client: Client; codePath: string; untracedPath: string } | undefined;

/** In each test process (root hooks): connections to the tier's server. */
export async function connect(): Promise<void> {
  const address = process.env[ADDRESS];
  const codePath = process.env[BUNDLE];
  const untracedPath = process.env[UNTRACED_BUNDLE];
  if (!address || !codePath || !untracedPath)
    throw new Error('the workflow tier has no server (its global setup starts it)');
  installRuntime();
  const [native, connection] = await Promise.all([
    NativeConnection.connect({ address }),
    Connection.connect({ address }),
  ]);
  connected = { native, client: new Client({ connection, namespace: NAMESPACE }), codePath, untracedPath };
}

export async function disconnect(): Promise<void> {
  const open = connected;
  connected = undefined;
  if (!open) return;
  await open.client.connection.close();
  await open.native.close();
}

function installRuntime(): void {
  try {
    // Activities failing on purpose would fill the output at WARN.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed already in this process
  }
}

/** What a test does while its worker runs. */
export interface Run {
  client: Client;
  taskQueue: string;
  /** Starts a workflow on the test's task queue; it is terminated after the test if still running. */
  start<R>(
    workflowType: string,
    input: object,
  ): Promise<WorkflowHandleWithFirstExecutionRunId<(input: object) => Promise<R>>>;
}

/** The tier's workflow bundles: with the tracing interceptors (what tests run) and without them. */
export function tierBundles(): { traced: string; untraced: string } {
  if (!connected) throw new Error('the workflow tier is not connected (its root hooks connect)');
  return { traced: connected.codePath, untraced: connected.untracedPath };
}

/**
 * Runs `body` while a worker on a task queue of the test's own runs the bundled workflows with
 * `fakes` as their activities; workflows still running afterwards are terminated. `taskQueue` puts
 * the worker on a given queue instead (one an earlier worker of the test served), `untraced` runs
 * the workflows without the tracing interceptors, as a worker that exports no traces does.
 */
export async function withWorker<T>(
  fakes: FakeActivities,
  body: (run: Run) => Promise<T>,
  options: { taskQueue?: string; untraced?: boolean } = {},
): Promise<T> {
  if (!connected) throw new Error('the workflow tier is not connected (its root hooks connect)');
  const { native, client, codePath, untracedPath } = connected;
  const taskQueue = options.taskQueue ?? `workflows-${randomBytes(4).toString('hex')}`;
  const tracing = currentTracing();
  const worker = await Worker.create({
    connection: native,
    namespace: NAMESPACE,
    taskQueue,
    workflowBundle: { codePath: options.untraced ? untracedPath : codePath },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
    activities: fakes.activities(),
    shutdownGraceTime: 0,
    ...SLOW_MACHINE,
  });
  const started: WorkflowHandle[] = [];
  const run: Run = {
    client,
    taskQueue,
    async start<R>(workflowType: string, input: object) {
      const handle = await client.workflow.start<(input: object) => Promise<R>>(workflowType, {
        taskQueue,
        workflowId: `${workflowType}-${randomBytes(4).toString('hex')}`,
        args: [input],
      });
      started.push(handle);
      return handle;
    },
  };
  try {
    return await worker.runUntil(() => body(run));
  } finally {
    await terminate(started);
  }
}

/** Terminates the workflows still running. */
async function terminate(handles: WorkflowHandle[]): Promise<void> {
  for (const handle of handles) {
    try {
      await handle.terminate('the test is over');
    } catch (error) {
      // Ended already: nothing to terminate.
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
  }
}

/** Polls `check` until it holds, failing with `what` after `timeoutMs` (the project's `eventually`). */
export async function eventually(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  await waitFor(what, () => Promise.resolve(check() || undefined), timeoutMs, 20);
}

/** The signals and queries the API and operators send by name. */
export const SIGNALS = {
  reconsider: reconsiderSignal.name,
  retryTesting: retryTestingSignal.name,
  retryProvisioning: retryProvisioningSignal.name,
  decommissionNow: decommissionNowSignal.name,
  crossConnectCompleted: crossConnectCompletedSignal.name,
  accountChanged: accountChangedSignal.name,
} as const;
export const STEP_QUERY = 'provisioningStep';

/** A UTC day `days` from today, as the stored resources write it. */
export const dayFromToday = (days: number): string =>
  new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

/** Asks `query` until its answer passes `check`, and returns that answer; fails with the last one. */
export async function queryUntil<T>(
  handle: WorkflowHandle,
  query: string,
  check: (answer: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await handle.query<T>(query);
    if (check(answer)) return answer;
    if (Date.now() > deadline) assert.fail(`the ${query} query kept answering ${JSON.stringify(answer)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Waits until the workflow's `provisioningStep` query answers `step`. */
export async function stepIs(handle: WorkflowHandle, step: string): Promise<void> {
  await queryUntil<string>(handle, STEP_QUERY, (answer) => answer === step);
}

/**
 * Has the workflow look at its resource again (a `reconsider`), twice over: once the second look is
 * made, whatever the first one found has been acted on.
 */
export async function lookedAgain(
  handle: WorkflowHandle,
  looks: () => number,
  signal: string = SIGNALS.reconsider,
): Promise<void> {
  const before = looks();
  await handle.signal(signal);
  await eventually('a look', () => looks() >= before + 1);
  await handle.signal(signal);
  await eventually('a second look', () => looks() >= before + 2);
}
