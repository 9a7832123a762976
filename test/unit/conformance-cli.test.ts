import assert from 'node:assert/strict';
import { homedir } from 'node:os';
import path from 'node:path';
import { defaultLedgerFile } from '../../conformance/cli';

describe('the conformance CLI', () => {
  it("keeps its ledgers in the user's state folder, one per exchange", () => {
    assert.equal(
      defaultLedgerFile('https://ixapi.example.net/api/v2', { XDG_STATE_HOME: '/var/lib/ci' }),
      '/var/lib/ci/ixapi-conformance/ledger-ixapi.example.net.jsonl',
    );
    assert.equal(
      defaultLedgerFile('http://127.0.0.1:8000/api/v2', {}),
      path.join(homedir(), '.local', 'state', 'ixapi-conformance', 'ledger-127.0.0.1_8000.jsonl'),
    );
    assert.equal(
      defaultLedgerFile('http://[::1]:8000/api/v2', { XDG_STATE_HOME: ' ' }),
      path.join(homedir(), '.local', 'state', 'ixapi-conformance', 'ledger-___1__8000.jsonl'),
    );
  });
});
