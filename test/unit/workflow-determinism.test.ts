import assert from 'node:assert/strict';
import { restrictedImports as linted } from '../support/lint';

/** Lints `code` as if it were a file in workflows/, returning the restricted-import messages. */
const restrictedImports = (code: string) => linted('workflows/index.ts', code);

describe('workflow determinism is enforced by lint', function () {
  this.timeout(60_000);

  it('allows @temporalio/workflow, domain/ and type-only activity imports', async () => {
    const messages = await restrictedImports(
      [
        "import { sleep } from '@temporalio/workflow';",
        "import type { Activities } from '../activities';",
        "import { STATES } from '../domain/states';",
        'export async function ok(): Promise<number> { await sleep(1); return STATES.length; }',
        'export type A = Activities;',
      ].join('\n'),
    );
    assert.deepEqual(messages, []);
  });

  for (const [what, line] of [
    ['a Node built-in', "import { readFileSync } from 'node:fs';"],
    ['a bare Node built-in', "import { randomUUID } from 'crypto';"],
    ['express', "import express from 'express';"],
    ['sequelize', "import { Sequelize } from 'sequelize';"],
    ['the database layer', "import { openDatabase } from '../db';"],
    ['activity values', "import { createActivities } from '../activities';"],
    ['device drivers', "import { LabDriver } from '../drivers/lab/driver';"],
    ['the Temporal client', "import { Client } from '@temporalio/client';"],
  ] as const) {
    it(`rejects ${what}`, async () => {
      const messages = await restrictedImports(`${line}\nexport const x = 1;`);
      assert.ok(messages.length >= 1, `expected a restricted import for: ${line}`);
    });
  }
});
