import type { Logger } from 'pino';

/** One clean-up: deletes what has outlived its use and answers how many rows went. */
export interface Chore {
  name: string;
  run(): Promise<number>;
}

/**
 * Runs the API's clean-ups (expired refresh tokens, idempotency keys, rate-limit counters) every
 * `intervalMs`, the first soon after start. Every replica runs them; deleting what another replica
 * deleted already is harmless. A failing chore is logged and tried again next round; a round that
 * outlasts the interval is not overlapped. Answers a function that stops it.
 */
export function runHousekeeping(options: {
  chores: readonly Chore[];
  logger: Logger;
  intervalMs?: number;
}): () => Promise<void> {
  const { chores, logger, intervalMs = 60_000 } = options;
  let stopped = false;
  let running: Promise<void> | undefined;
  const round = async () => {
    for (const chore of chores) {
      if (stopped) return;
      try {
        const removed = await chore.run();
        if (removed) logger.info({ chore: chore.name, removed }, 'housekeeping removed expired rows');
      } catch (error) {
        logger.warn(
          { chore: chore.name, err: error instanceof Error ? error.message : String(error) },
          'housekeeping failed',
        );
      }
    }
  };
  const tick = () => {
    if (stopped || running) return;
    running = round().finally(() => {
      running = undefined;
    });
  };
  const first = setTimeout(tick, Math.min(intervalMs, 5_000));
  const timer = setInterval(tick, intervalMs);
  first.unref();
  timer.unref();
  return async () => {
    stopped = true;
    clearTimeout(first);
    clearInterval(timer);
    await running;
  };
}
