import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { SEARCH_ATTRIBUTES } from '../domain/search-attributes';
import { TRAFFIC_COLLECTOR_WORKFLOW_ID } from '../domain/statistics';
import type { OutboxRepository, PendingMessage } from '../db/repositories/outbox-repository';
import { isSignal } from '../db/repositories/outbox-repository';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { temporalAddressOf } from '../config/config';

export interface TemporalHandle {
  client: Client;
  /** Answers when the Temporal frontend is serving; throws otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A Temporal client that connects lazily, so the API starts (and reports `warn`) while Temporal is down. */
export function connectTemporal(options: { address: string; namespace: string }): TemporalHandle {
  const connection = Connection.lazy({ address: options.address, connectTimeout: 2000 });
  const client = new Client({ connection, namespace: options.namespace });
  // Probes still retrying inside gRPC when the connection closes would fail after the fact; close
  // waits for them (each is bounded by its deadline).
  const probes = new Set<Promise<unknown>>();
  return {
    client,
    async ping() {
      const probe = connection.withDeadline(Date.now() + 2000, () =>
        connection.workflowService.describeNamespace({ namespace: options.namespace }),
      );
      probes.add(probe);
      try {
        await probe;
      } finally {
        probes.delete(probe);
      }
    },
    async close() {
      await Promise.allSettled([...probes]);
      await connection.close();
    },
  };
}

function typedSearchAttributes(values: Record<string, string>): SearchAttributePair[] {
  return SEARCH_ATTRIBUTES.filter((key) => values[key.name] !== undefined).map((key) => ({
    key,
    value: values[key.name],
  }));
}

/**
 * Starts the workflows that committed transactions asked for. The handler calls `deliver` right
 * after commit; `relayOnce` retries whatever was not delivered (the process died, Temporal was down),
 * so no order is lost. Workflow ids are deterministic, so a second start is harmless.
 */
export function createWorkflowStarter(deps: {
  client: Client;
  outbox: OutboxRepository;
  taskQueue: string;
  logger: Logger;
}) {
  const { client, outbox, taskQueue, logger } = deps;

  async function send(message: PendingMessage): Promise<void> {
    if (isSignal(message)) {
      await client.workflow.getHandle(message.workflowId).signal(message.signal);
      return;
    }
    await client.workflow.start(message.workflowType, {
      workflowId: message.workflowId,
      taskQueue,
      args: message.args,
      typedSearchAttributes: typedSearchAttributes(message.searchAttributes),
    });
  }

  /**
   * Sends one outbox message. A start whose workflow already runs, and a signal for a workflow that
   * is no longer running (nothing waits for it), count as delivered.
   */
  async function deliver(start: PendingMessage): Promise<boolean> {
    try {
      await send(start);
    } catch (error) {
      const settled =
        error instanceof WorkflowExecutionAlreadyStartedError ||
        (error instanceof WorkflowNotFoundError && isSignal(start));
      if (!settled) {
        const message = error instanceof Error ? error.message : String(error);
        logger.warn(
          { workflowId: start.workflowId, err: message },
          'workflow message deferred to the outbox relay',
        );
        await outbox.markFailed(start.id, message).catch(() => undefined);
        return false;
      }
    }
    await outbox.markDelivered(start.id);
    return true;
  }

  return {
    deliver,
    /** Delivers every start older than `graceMs` that is still pending; returns how many went out. */
    async relayOnce(graceMs = 5000): Promise<number> {
      const due = await outbox.due(new Date(Date.now() - graceMs));
      let delivered = 0;
      for (const start of due) if (await deliver(start)) delivered += 1;
      return delivered;
    },
  };
}

export type WorkflowStarter = ReturnType<typeof createWorkflowStarter>;

/**
 * Starts the one workflow that samples traffic counters, unless it runs already: its id is fixed,
 * so every worker (and the test stack) may try at start-up. Answers whether this call started it.
 */
export async function startTrafficCollector(
  client: Client,
  options: { taskQueue: string; intervalSeconds: number },
): Promise<boolean> {
  try {
    await client.workflow.start('collectTrafficStatistics', {
      workflowId: TRAFFIC_COLLECTOR_WORKFLOW_ID,
      taskQueue: options.taskQueue,
      args: [{ intervalSeconds: options.intervalSeconds }],
      typedSearchAttributes: typedSearchAttributes({
        IxapiResourceType: 'statistics',
        IxapiResourceId: 'collector',
      }),
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

/** The configured Temporal connection and a workflow starter over it. */
export function connectWorkflowStarter(deps: { config: Config; outbox: OutboxRepository; logger: Logger }) {
  const { config, outbox, logger } = deps;
  const temporal = connectTemporal({
    address: temporalAddressOf(config),
    namespace: config.temporalNamespace,
  });
  const starter = createWorkflowStarter({
    client: temporal.client,
    outbox,
    taskQueue: config.temporalTaskQueue,
    logger,
  });
  return { temporal, starter };
}

/** Runs the outbox relay every `intervalMs` until stopped; errors are logged and retried next round. */
export function runOutboxRelay(
  starter: WorkflowStarter,
  logger: Logger,
  intervalMs = 5000,
  graceMs = 5000,
): () => Promise<void> {
  let stopped = false;
  let current: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    if (stopped) return;
    current = starter.relayOnce(graceMs).catch((error: unknown) => {
      logger.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'outbox relay round failed',
      );
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await current;
  };
}
