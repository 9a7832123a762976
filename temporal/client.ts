import { context, propagation, ROOT_CONTEXT, SpanStatusCode } from '@opentelemetry/api';
import {
  Client,
  Connection,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { SearchAttributePair } from '@temporalio/common';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { SEARCH_ATTRIBUTES } from '../domain/search-attributes';
import { TRAFFIC_COLLECTOR_WORKFLOW_ID } from '../domain/statistics';
import { FABRIC_SUPERVISOR_WORKFLOW_ID } from '../domain/supervision';
import type { OutboxRepository, PendingMessage } from '../db/repositories/outbox-repository';
import { isSignal } from '../db/repositories/outbox-repository';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { tracer } from '../telemetry/tracer';
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
  // Workflow starts and signals carry the caller's trace context in their headers (nothing when
  // tracing is off), so the workflow's spans join the trace of the request that asked for it.
  const client = new Client({
    connection,
    namespace: options.namespace,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
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

/** How long a process that sends an outbox message holds it before another may take it over. */
export const OUTBOX_LEASE_MS = 60_000;

/** What a process logs when it sent an outbox message that another had marked delivered first. */
export const OUTBOX_DELIVERED_TWICE = 'outbox message delivered by another process too';
/**
 * How long the process that wrote a message tries to send it, in the background, before leaving
 * it to the relay (Temporal down or slow). The relay tries longer.
 */
const SEND_WITHIN_MS = { writer: 2_000, relay: 10_000 };
/** How long background sends stop after a failed send (the relay's rounds go on meanwhile). */
const SEND_PAUSE_MS = 5_000;

/**
 * Starts the workflows that committed transactions asked for, and sends their signals. The outbox
 * hands each committed message to `sendSoon`; `relayOnce` takes over whatever was not delivered (the process
 * died, Temporal was down), so no order is lost. Each message is claimed before it is sent, so that
 * of several API replicas only one sends it; workflow ids are deterministic, so that even a second
 * start (a claim that ran out while Temporal was slow) is harmless.
 */
export function createWorkflowStarter(deps: {
  client: Client;
  outbox: OutboxRepository;
  taskQueue: string;
  logger: Logger;
  sendWithinMs?: { writer: number; relay: number };
  /** How long background sends leave messages to the relay after a send failed. */
  pauseMs?: number;
}) {
  const { client, outbox, taskQueue, logger, sendWithinMs = SEND_WITHIN_MS, pauseMs = SEND_PAUSE_MS } = deps;

  /**
   * Sends a message, retrying within `withinMs` (the client's retries would take half a minute), in
   * a span of the trace of the request that wrote it, whoever sends it and however late.
   */
  async function send(message: PendingMessage, withinMs: number, by: 'writer' | 'relay'): Promise<void> {
    const written = propagation.extract(ROOT_CONTEXT, message.traceContext ?? {});
    const attributes = {
      'ixapi.outbox.id': message.id,
      'ixapi.outbox.sender': by,
      'ixapi.outbox.attempts': message.attempts,
      'temporal.workflow_id': message.workflowId,
    };
    await context.with(written, () =>
      tracer.startActiveSpan('outbox deliver', { attributes }, async (span) => {
        try {
          await sendNow(message, withinMs);
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      }),
    );
  }

  async function sendNow(message: PendingMessage, withinMs: number): Promise<void> {
    await client.connection.withDeadline(Date.now() + withinMs, async () => {
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
    });
  }

  /**
   * Sends one claimed outbox message. A start whose workflow already runs, and a signal for a
   * workflow that is no longer running (nothing waits for it), count as delivered.
   */
  async function sendClaimed(
    start: PendingMessage,
    withinMs: number,
    by: 'writer' | 'relay',
  ): Promise<boolean> {
    try {
      await send(start, withinMs, by);
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
        failedAt = Date.now();
        await outbox.markFailed(start.id, message).catch(() => undefined);
        return false;
      }
    }
    failedAt = undefined;
    // A claim lasts OUTBOX_LEASE_MS: a send slower than that may have let another process claim
    // and send the message too. Rare, and harmless for a start (its workflow id is taken), but said.
    if (!(await outbox.markDelivered(start.id)))
      logger.warn({ workflowId: start.workflowId, outboxId: start.id }, OUTBOX_DELIVERED_TWICE);
    return true;
  }

  /**
   * When a send last failed (Temporal down or out of reach), until one succeeds: meanwhile the
   * background sends stop trying, for `pauseMs` after each failure, and leave what commits to the
   * relay, whose rounds try again one message at a time. An outage then costs an order nothing but
   * its commit, rather than seconds of retries each.
   */
  let failedAt: number | undefined;
  const paused = () => failedAt !== undefined && Date.now() - failedAt < pauseMs;

  /**
   * Sends a message this process wrote. Answers whether it went out now; one that did not (or
   * that another process holds) goes out with the relay.
   */
  async function deliver(start: PendingMessage): Promise<boolean> {
    if (!(await outbox.claim(start.id, OUTBOX_LEASE_MS))) return outbox.isDelivered(start.id);
    return sendClaimed(start, sendWithinMs.writer, 'writer');
  }

  /** Background sends under way, so that a stopping process can let them finish. */
  const underWay = new Set<Promise<void>>();

  return {
    deliver,
    /**
     * Sends a committed message in the background, once the code that wrote it has gone on (its
     * client is answered at commit): a Temporal that is slow or down never holds up an answer.
     * Whatever does not go out (Temporal down, the database unreachable) stays for the relay, as
     * does everything while sends are paused after a failure.
     */
    sendSoon(message: PendingMessage): void {
      if (paused()) return;
      const sending = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => deliver(message))
        .then(
          () => undefined,
          (error: unknown) =>
            logger.warn(
              { workflowId: message.workflowId, err: error instanceof Error ? error.message : String(error) },
              'workflow message left to the outbox relay',
            ),
        )
        .finally(() => underWay.delete(sending));
      underWay.add(sending);
    },
    /** Waits for the background sends under way (each is bounded by its send deadline). */
    async settle(): Promise<void> {
      while (underWay.size) await Promise.allSettled([...underWay]);
    },
    /**
     * Claims and sends the messages older than `graceMs` that are still pending and that no other
     * process holds; returns how many went out.
     */
    async relayOnce(graceMs = 5000): Promise<number> {
      const due = await outbox.claimDue({ graceMs, leaseMs: OUTBOX_LEASE_MS });
      let delivered = 0;
      for (const [index, start] of due.entries()) {
        if (await sendClaimed(start, sendWithinMs.relay, 'relay')) {
          delivered += 1;
          continue;
        }
        // Temporal is down or slow: the rest of the batch waits for the next round, free for any replica.
        await outbox.release(due.slice(index + 1).map((message) => message.id));
        break;
      }
      return delivered;
    },
  };
}

export type WorkflowStarter = ReturnType<typeof createWorkflowStarter>;

/**
 * Starts a workflow of which one runs for the whole namespace, under its fixed id, unless it runs
 * already: every worker (and the test stack) may try at start-up. Answers whether this call
 * started it.
 */
async function startSingleton(
  client: Client,
  options: { workflowType: string; workflowId: string; taskQueue: string; args: unknown[]; resource: string },
): Promise<boolean> {
  const [resourceType, resourceId] = options.resource.split(':');
  try {
    await client.workflow.start(options.workflowType, {
      workflowId: options.workflowId,
      taskQueue: options.taskQueue,
      args: options.args,
      typedSearchAttributes: typedSearchAttributes({
        IxapiResourceType: resourceType,
        IxapiResourceId: resourceId,
      }),
    });
    return true;
  } catch (error) {
    if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
    throw error;
  }
}

/** Starts the one workflow that samples traffic counters, unless it runs already (startSingleton). */
export function startTrafficCollector(
  client: Client,
  options: { taskQueue: string; intervalSeconds: number },
): Promise<boolean> {
  return startSingleton(client, {
    workflowType: 'collectTrafficStatistics',
    workflowId: TRAFFIC_COLLECTOR_WORKFLOW_ID,
    taskQueue: options.taskQueue,
    args: [{ intervalSeconds: options.intervalSeconds }],
    resource: 'statistics:collector',
  });
}

/**
 * Starts the one workflow that supervises the fabric (DEVICE_DRIVER=ovs), unless it runs already
 * (startSingleton).
 */
export function startFabricSupervisor(
  client: Client,
  options: { taskQueue: string; intervalSeconds: number },
): Promise<boolean> {
  return startSingleton(client, {
    workflowType: 'superviseFabric',
    workflowId: FABRIC_SUPERVISOR_WORKFLOW_ID,
    taskQueue: options.taskQueue,
    args: [{ intervalSeconds: options.intervalSeconds }],
    resource: 'fabric:supervisor',
  });
}

/** The configured Temporal connection and a workflow starter over it. */
export function connectWorkflowStarter(deps: {
  config: Config;
  outbox: OutboxRepository;
  logger: Logger;
  /** How long a background send tries, and how long sends pause after one failed (tests). */
  sending?: { withinMs?: number; pauseMs?: number };
}) {
  const { config, outbox, logger, sending } = deps;
  const temporal = connectTemporal({
    address: temporalAddressOf(config),
    namespace: config.temporalNamespace,
  });
  const starter = createWorkflowStarter({
    client: temporal.client,
    outbox,
    taskQueue: config.temporalTaskQueue,
    logger,
    sendWithinMs: { ...SEND_WITHIN_MS, ...(sending?.withinMs && { writer: sending.withinMs }) },
    pauseMs: sending?.pauseMs,
  });
  return { temporal, starter };
}

/**
 * Runs the outbox relay every `intervalMs` until stopped, and prunes messages delivered longer than
 * `retentionMs` ago about once a minute; errors are logged and retried next round.
 */
export function runOutboxRelay(options: {
  starter: WorkflowStarter;
  outbox: OutboxRepository;
  logger: Logger;
  intervalMs?: number;
  graceMs?: number;
  retentionMs: number;
}): () => Promise<void> {
  const { starter, outbox, logger, intervalMs = 5000, graceMs = 5000, retentionMs } = options;
  const pruneEvery = Math.max(1, Math.round(60_000 / intervalMs));
  let rounds = 0;
  let stopped = false;
  let running: Promise<void> | undefined;
  const failed = (what: string) => (error: unknown) => {
    logger.warn({ err: error instanceof Error ? error.message : String(error) }, what);
  };
  const round = async () => {
    await starter.relayOnce(graceMs).catch(failed('outbox relay round failed'));
    if (rounds++ % pruneEvery !== 0) return;
    const pruned = await outbox
      .prune(new Date(Date.now() - retentionMs))
      .catch(failed('outbox pruning failed'));
    if (pruned) logger.info({ pruned }, 'delivered outbox messages pruned');
  };
  // A round that outlasts the interval is not overlapped by the next one.
  const timer = setInterval(() => {
    if (stopped || running) return;
    running = round().finally(() => {
      running = undefined;
    });
  }, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
