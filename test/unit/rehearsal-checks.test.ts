import assert from 'node:assert/strict';
import { answeredRequests } from '../../scripts/rehearsal/checks';
import type { Exchange } from '../../scripts/rehearsal/traffic';

const answered = (verdicts: ReturnType<typeof answeredRequests>) =>
  verdicts.find((v) => v.check.startsWith('every request answered'))!;

describe('rehearsal: requests cut off by the replicas it ends', () => {
  const killed = { api: 'api-1', at: 1000, dead: 1050 };
  const stopped = { api: 'api-2', at: 5000 };
  const reset = (api: string, startedAt: number, endedAt: number): Exchange => ({
    api,
    method: 'POST',
    path: '/contacts',
    startedAt,
    endedAt,
    transport: 'ECONNRESET',
  });

  it("excuses a request the killed replica's kernel took between the signal and its death", () => {
    const verdict = answered(answeredRequests([reset('api-1', 1020, 1060)], killed, stopped));
    assert.equal(verdict.ok, true, verdict.detail);
    assert.match(verdict.detail, /1 cut off by the kill of api-1/);
  });

  it('excuses a request the killed replica held when the signal came', () => {
    const verdict = answered(answeredRequests([reset('api-1', 900, 1055)], killed, stopped));
    assert.equal(verdict.ok, true, verdict.detail);
  });

  it('excuses a kept-alive connection to the killed replica that the client used after its death', () => {
    // The socket was closed with the process: the request ends on the peer's close or on the
    // kernel's reset of its bytes, whichever comes first; no process was left to take it.
    for (const transport of ['UND_ERR_SOCKET', 'ECONNRESET']) {
      const pooled: Exchange = { ...reset('api-1', 1100, 1101), transport };
      const verdict = answered(answeredRequests([pooled], killed, stopped));
      assert.equal(verdict.ok, true, `${transport}: ${verdict.detail}`);
      assert.match(verdict.detail, /1 cut off by the kill of api-1/);
    }
  });

  it('holds against the killed replica a request begun after its death that ended otherwise', () => {
    const late: Exchange = { ...reset('api-1', 1100, 4100), transport: 'UND_ERR_HEADERS_TIMEOUT' };
    const verdict = answered(answeredRequests([late], killed, stopped));
    assert.equal(verdict.ok, false);
    assert.match(verdict.detail, /POST \/contacts on api-1: UND_ERR_HEADERS_TIMEOUT/);
  });

  it('holds against another replica a closed kept-alive connection', () => {
    const pooled: Exchange = { ...reset('api-3', 1100, 1101), transport: 'UND_ERR_SOCKET' };
    assert.equal(answered(answeredRequests([pooled], killed, stopped)).ok, false);
  });

  it('holds against a replica that was not ended a reset at the time of the kill', () => {
    const verdict = answered(answeredRequests([reset('api-3', 1020, 1060)], killed, stopped));
    assert.equal(verdict.ok, false);
  });

  it('does not count a refused connection as unanswered', () => {
    const refused: Exchange = { ...reset('api-1', 2000, 2001), transport: 'ECONNREFUSED' };
    assert.equal(answered(answeredRequests([refused], killed, stopped)).ok, true);
  });
});
