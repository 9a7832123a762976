import type { HttpResponse } from '../http';
import { assertContract } from '../http';
import type { Judge } from './certainty';
import { queryLenience } from './lenience';
import type { Draft } from './drafts';
import type { WireRequest } from './wire';
import { asCurl } from './wire';

/** Something a request showed that must not be: a server error, an answer off the contract, a write let through. */
export interface Finding {
  kind: 'server error' | 'contract' | 'write accepted' | 'no answer' | 'document lenience';
  request: WireRequest;
  status: number;
  detail: string;
  reasons: string[];
}

/** Counts of what was sent and answered. */
export class Tally {
  total = 0;
  writes = 0;
  readonly byStatus = new Map<number, number>();
  readonly byOperation = new Map<string, number>();
  readonly byIdentity = new Map<string, number>();
  readonly byReason = new Map<string, number>();

  count(request: WireRequest, status: number, reasons: string[]): void {
    const bump = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);
    this.total += 1;
    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(request.method)) this.writes += 1;
    bump(this.byStatus, status);
    bump(this.byOperation, request.drafted.operationId);
    bump(this.byIdentity, request.identity);
    // The first reason is what makes the write certain to be refused; the rest come along.
    if (reasons.length) bump(this.byReason, reasons[0].replace(/:.*$/s, ''));
  }

  report(): string {
    const table = (title: string, map: Map<string | number, number>) =>
      [
        `${title}:`,
        ...[...map.entries()]
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])))
          .map(([key, n]) => `  ${String(key).padEnd(52)} ${n}`),
      ].join('\n');
    return [
      `requests: ${this.total}, of which writes: ${this.writes}`,
      table('by status', this.byStatus),
      table('by identity', this.byIdentity),
      table('by operation (as drafted)', this.byOperation),
      table('writes by what makes them certain to be refused (first reason)', this.byReason),
    ].join('\n');
  }
}

/** The ways a write is made certain to be refused when its draft left it acceptable. */
function withFallback(request: WireRequest, fallback: Draft['fallback']): WireRequest {
  const without = (name: string) => request.headers.filter(([key]) => key.toLowerCase() !== name);
  switch (fallback) {
    case 'media-type':
      return {
        ...request,
        headers: [...without('content-type'), ['Content-Type', 'text/plain']],
        body: request.body?.length ? request.body : Buffer.from('x'),
      };
    case 'malformed-json':
      return {
        ...request,
        headers: [...without('content-type'), ['Content-Type', 'application/json']],
        body: Buffer.from('{'),
      };
    default: {
      const { freshKey: _fresh, ...rest } = request;
      return { ...rest, headers: [...without('idempotency-key'), ['Idempotency-Key', 'not a key']] };
    }
  }
}

/**
 * Sends every request, `concurrency` at a time, and holds each answer to the rules: below 500, on
 * the contract, and no write accepted. A write without a reason to be refused is made certain first.
 */
export async function runCampaign(options: {
  count: number;
  concurrency: number;
  draft: (index: number) => { request: WireRequest; fallback: Draft['fallback'] };
  judge: Judge;
  send: (request: WireRequest) => Promise<HttpResponse>;
  /** Told of every request and its answer (for replaying a few with NEGATIVE_ONLY). */
  trace?: (request: WireRequest, response: HttpResponse, reasons: string[]) => void;
}): Promise<{ tally: Tally; findings: Finding[]; freshKeys: string[] }> {
  const tally = new Tally();
  const findings: Finding[] = [];
  const freshKeys: string[] = [];
  let next = 0;
  async function worker(): Promise<void> {
    for (let index = next++; index < options.count; index = next++) {
      const drafted = options.draft(index);
      let request = drafted.request;
      let { reasons, lenience } = options.judge.judge(request);
      const write = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(request.method);
      for (const fallback of [drafted.fallback, 'idempotency-key' as const]) {
        if (!write || reasons.length) break;
        request = withFallback(request, fallback);
        ({ reasons, lenience } = options.judge.judge(request));
      }
      if (write && !reasons.length)
        throw new Error(`request ${index} is a write with no certain refusal:\n${asCurl(request, '')}`);
      if (request.freshKey) freshKeys.push(request.freshKey);
      let response: HttpResponse;
      try {
        response = await options.send(request);
      } catch (error) {
        findings.push({ kind: 'no answer', request, status: 0, detail: String(error), reasons });
        tally.count(request, 0, reasons);
        continue;
      }
      tally.count(request, response.status, reasons);
      options.trace?.(request, response, reasons);
      const finding = (kind: Finding['kind'], detail: string) =>
        findings.push({ kind, request, status: response.status, detail, reasons });
      if (response.status >= 500) finding('server error', response.text.slice(0, 300));
      if (write && response.status < 300) finding('write accepted', response.text.slice(0, 300));
      if (response.status < 300 && request.method === request.drafted.method)
        lenience.push(...queryLenience(request.drafted, request.path));
      // What the document's schemas let through matters where the server took it; a request refused
      // anyway (its body read or not) was held back by the server's own rules.
      if (response.status < 300) for (const what of lenience) finding('document lenience', what);
      // A server error is off the contract too; it is reported once, as what it is.
      if (response.status < 500) {
        try {
          assertContract(request.method, request.path, response);
        } catch (error) {
          finding('contract', (error as Error).message.slice(0, 400));
        }
      }
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, () => worker()));
  return { tally, findings, freshKeys };
}

/** Findings grouped by kind, operation, status and message, each with its first request. */
export function summarise(findings: readonly Finding[], baseUrl: string, seed: number): string {
  const groups = new Map<string, { count: number; first: Finding }>();
  for (const finding of findings) {
    const key = `${finding.kind} | ${finding.request.method} ${finding.request.drafted.path} → ${finding.status} | ${finding.detail.replace(/[0-9a-f-]{8,}|\d+/g, '#').slice(0, 120)}`;
    const group = groups.get(key) ?? { count: 0, first: finding };
    group.count += 1;
    groups.set(key, group);
  }
  return [...groups.entries()]
    .map(
      ([key, { count, first }]) =>
        `${count} × ${key}\n  request #${first.request.index} (NEGATIVE_SEED=${seed} NEGATIVE_ONLY=${first.request.index}), identity ${first.request.identity}, body from ${first.request.bodyFrom ?? 'none'}, refused because: ${first.reasons.join('; ') || '(a read)'}\n${asCurl(
          first.request,
          baseUrl,
        )
          .split('\n')
          .map((line) => `    ${line}`)
          .join('\n')}\n  answer: ${first.detail}`,
    )
    .join('\n\n');
}
