import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IdempotencyRepository } from '../db/repositories/idempotency-repository';
import { ValidationError } from '../domain/errors';
import { RequestProblem } from './request-problems';
import type { Reply } from './operations';

/** The request header naming a retry-safe request (the IETF httpapi Idempotency-Key draft). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** Set on an answer that repeats the first answer given for the key. */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long a key and its answer are kept: a retry within this time gets the first answer. */
export const KEY_LIFETIME_SECONDS = 24 * 3600;
/**
 * How long the request holding a key counts as running. A key still unanswered after it belonged
 * to a process that stopped mid-request: whether its change was made cannot be told from here.
 */
const LEASE_SECONDS = 300;
/** How long a retry waits for the request it repeats to finish before it is refused. */
const WAIT_MS = 10_000;
const POLL_MS = 100;

/** A key is 1 to 255 visible ASCII characters; a structured-field string may come in quotes. */
const KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON with the keys of every object sorted, so that two encodings of one body compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What identifies a request: its method, its target and its body (bytes, or JSON in any key order). */
export function fingerprintOf(request: { method: string; path: string; body: unknown }): string {
  const hash = createHash('sha256').update(`${request.method} ${request.path}\n`);
  if (Buffer.isBuffer(request.body)) hash.update(request.body);
  else hash.update(canonical(request.body ?? null));
  return hash.digest('hex');
}

function reused(): RequestProblem {
  return new RequestProblem(
    422,
    'idempotency-key-reused',
    'Idempotency-Key reused',
    `This ${IDEMPOTENCY_HEADER} was first sent with another request (method, path or body); use a new key for a new request.`,
  );
}

function stored(reply: Reply): { status: number; contentType: string; body: Buffer } {
  const contentType = reply.contentType ?? 'application/json';
  const body = Buffer.isBuffer(reply.body)
    ? reply.body
    : Buffer.from(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body ?? null));
  return { status: reply.status, contentType, body };
}

function replayed(answer: { status: number; contentType: string | null; body: Buffer | null }): Reply {
  const contentType = answer.contentType ?? 'application/json';
  const bytes = answer.body ?? Buffer.alloc(0);
  return {
    status: answer.status,
    contentType,
    body: /json/.test(contentType) ? (JSON.parse(bytes.toString('utf8')) as unknown) : bytes,
    headers: { [REPLAYED_HEADER]: 'true' },
  };
}

/**
 * Retry-safe writes. A request carrying an `Idempotency-Key` is carried out once per account and
 * key: a repetition within KEY_LIFETIME_SECONDS (same method, path and body) gets the first answer
 * without a second effect, also while the first is still running (it waits for it); the key with
 * another request is refused (422). Only answers that changed something (2xx) are kept: a refused
 * request changed nothing, so its retry is carried out anew.
 */
export function createIdempotency(keys: IdempotencyRepository) {
  return {
    /** The request's key, or undefined without one; a malformed key is a 400 naming the header. */
    keyOf(headers: Record<string, string | string[] | undefined>): string | undefined {
      const raw = headers[IDEMPOTENCY_HEADER.toLowerCase()];
      if (raw === undefined) return undefined;
      const text = (Array.isArray(raw) ? raw.join(',') : raw).trim();
      const key = /^"[^"]*"$/.test(text) ? text.slice(1, -1) : text;
      if (!KEY.test(key)) {
        throw new ValidationError([
          { name: IDEMPOTENCY_HEADER, reason: 'Must be 1 to 255 visible ASCII characters, such as a UUID.' },
        ]);
      }
      return key;
    },

    /** Carries out `execute` once for the account's key, or answers as the first request with it did. */
    async run(
      request: { account: string; key: string; method: string; path: string; body: unknown },
      execute: () => Promise<Reply>,
    ): Promise<Reply> {
      const { account, key } = request;
      const fingerprint = fingerprintOf(request);
      const entry = {
        account,
        key,
        fingerprint,
        method: request.method,
        path: request.path.slice(0, 2048),
        leaseSeconds: LEASE_SECONDS,
        lifetimeSeconds: KEY_LIFETIME_SECONDS,
      };
      const deadline = Date.now() + WAIT_MS;
      for (;;) {
        const claim = await keys.claim(entry);
        if (claim.outcome === 'claimed') break;
        if (claim.fingerprint !== fingerprint) throw reused();
        if (claim.outcome === 'answered') return replayed(claim.answer);
        if (claim.outcome === 'abandoned') {
          throw new RequestProblem(
            409,
            'idempotency-key-in-use',
            'Idempotency-Key of an interrupted request',
            `The first request with this ${IDEMPOTENCY_HEADER} was interrupted before it was answered, so whether it took effect is unknown. Read the resource to find out, then send a new key if it did not.`,
          );
        }
        if (Date.now() >= deadline) {
          throw new RequestProblem(
            409,
            'idempotency-key-in-use',
            'Idempotency-Key in use',
            `A request with this ${IDEMPOTENCY_HEADER} is still being carried out; repeat it shortly to get its answer.`,
            { 'Retry-After': '1' },
          );
        }
        await sleep(POLL_MS);
      }
      let reply: Reply;
      try {
        reply = await execute();
      } catch (error) {
        await keys.release(account, key);
        throw error;
      }
      if (reply.status >= 200 && reply.status < 300) await keys.answer(account, key, stored(reply));
      else await keys.release(account, key);
      return reply;
    },
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
