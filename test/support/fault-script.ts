import assert from 'node:assert/strict';
import http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { Fault } from '../../conformance/selftest/faults';
import type { FaultProxy } from '../../conformance/selftest/proxy';
import { startFaultProxy } from '../../conformance/selftest/proxy';

/** The base path the fake exchanges answer under. */
export const SCRIPT_BASE = '/api/v2';
/** The Authorization of the second caller, who sees nothing of the first's. */
export const SECOND = 'Bearer second';

/** One request of a fixed script; `second` sends it as the second caller. */
export interface Step {
  method: string;
  path: string;
  body?: unknown;
  second?: boolean;
  /** Further request headers (an Idempotency-Key, say). */
  headers?: Record<string, string>;
}

export interface Answer {
  status: number;
  body: string;
}

/** A fake exchange: answers requests from its state, which `reset` restores. */
export interface FakeExchange {
  handle(req: IncomingMessage, res: ServerResponse, body: Buffer): void;
  reset(): void;
}

async function call(origin: string, step: Step): Promise<Answer> {
  const headers: Record<string, string> = { ...step.headers };
  if (step.body !== undefined) headers['content-type'] ??= 'application/json';
  if (step.second) headers.authorization = SECOND;
  const response = await fetch(`${origin}${SCRIPT_BASE}${step.path}`, {
    method: step.method,
    headers,
    body: step.body === undefined ? undefined : JSON.stringify(step.body),
  });
  return { status: response.status, body: await response.text() };
}

/** The indexes of the steps whose answers differ from the direct ones. */
export const changedSteps = (answers: Answer[], direct: Answer[]): number[] =>
  answers.flatMap((answer, index) => (isDeepStrictEqual(answer, direct[index]) ? [] : [index]));

/** An answer's JSON, read freely: it is the fake exchange's own. */
export const json = (answer: Answer): any => JSON.parse(answer.body);

/**
 * A fake exchange behind the fault proxy, run through a fixed script: `start` answers the script
 * directly once (the answers every fault is compared with), `throughProxy` runs it through the
 * proxy with a fault set (or none), each time from the exchange's first state.
 */
export function scriptedExchange(exchange: FakeExchange, script: readonly Step[]) {
  let upstream: Server;
  let proxy: FaultProxy;
  let direct: Answer[] = [];
  const run = async (origin: string) => {
    exchange.reset();
    const answers: Answer[] = [];
    for (const step of script) answers.push(await call(origin, step));
    return answers;
  };
  return {
    direct: () => direct,
    async start() {
      upstream = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => exchange.handle(req, res, Buffer.concat(chunks)));
      });
      await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
      const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
      proxy = await startFaultProxy({ target: `${origin}${SCRIPT_BASE}` });
      direct = await run(origin);
    },
    async throughProxy(fault: Fault | null): Promise<Answer[]> {
      proxy.setFault(fault);
      return run(new URL(proxy.url).origin);
    },
    async stop() {
      await proxy.close();
      await new Promise<void>((resolve) => {
        upstream.close(() => resolve());
        upstream.closeAllConnections();
      });
    },
  };
}

/**
 * For each fault, tests that it changes the answer to at least one step of the script, and the same
 * steps whenever it is set again (it forgets what it remembered).
 */
export function describeEachFault(
  faults: readonly Fault[],
  harness: ReturnType<typeof scriptedExchange>,
): void {
  for (const fault of faults) {
    describe(fault.id, () => {
      let changed: number[];
      before(async () => {
        changed = changedSteps(await harness.throughProxy(fault), harness.direct());
      });

      it('changes at least one answer', () => {
        assert.ok(changed.length > 0, `${fault.id} changed nothing`);
      });

      it('forgets its memory when set again', async () => {
        assert.deepEqual(changedSteps(await harness.throughProxy(fault), harness.direct()), changed);
      });
    });
  }
}
