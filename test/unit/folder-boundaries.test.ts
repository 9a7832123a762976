import assert from 'node:assert/strict';
import path from 'node:path';
import { restrictedImports as linted } from '../support/lint';

/** Lints `line` in place of the code of `file` (a file of the project), returning the restricted-import messages. */
const restrictedImports = (file: string, line: string) => linted(file, `${line}\nexport const used = [x];\n`);

/** Imports the layout forbids: [file it would be in, the import]. */
const FORBIDDEN: [string, string][] = [
  ['api/server.ts', "import { LabDriver as x } from '../drivers/lab/driver';"],
  ['api/routes/statistics.ts', "import type { DeviceDriver as x } from '../../drivers/contract';"],
  ['api/server.ts', "import { createActivities as x } from '../activities';"],
  ['api/server.ts', "import { connectionOnLifecycle as x } from '../workflows/connection-provisioning';"],
  ['worker/main.ts', "import { createApiMetrics as x } from '../api/metrics';"],
  ['temporal/client.ts', "import { startApi as x } from '../api/server';"],
  ['drivers/lab/driver.ts', "import { openDatabase as x } from '../../db';"],
  ['drivers/lab/driver.ts', "import { createActivities as x } from '../../activities';"],
  ['activities/index.ts', "import { createWriteContext as x } from '../api/writes';"],
  ['activities/index.ts', "import { lifecycle as x } from '../workflows/lifecycle';"],
  ['db/index.ts', "import { problem as x } from '../api/problems';"],
  ['db/repositories/traffic-repository.ts', "import { LabDriver as x } from '../../drivers/lab/driver';"],
  ['db/index.ts', "import express from 'express'; const x = express;"],
  ['domain/states.ts', "import { openDatabase as x } from '../db';"],
  ['domain/states.ts', "import { Sequelize as x } from 'sequelize';"],
  ['telemetry/metrics.ts', "import { openDatabase as x } from '../db';"],
  ['config/config.ts', "import { STATES as x } from '../domain/states';"],
  ['conformance/cli.ts', "import { startApi as x } from '../api/server';"],
  ['conformance/checks/auth.ts', "import { openDatabase as x } from '../../db';"],
  ['spec/index.ts', "import { STATES as x } from '../domain/states';"],
  [
    'workflows/connection-provisioning.ts',
    "import { provisionConnectionV1 as x } from './legacy/connection-provisioning-v1';",
  ],
];

/** Imports it allows, one per folder at least. */
const ALLOWED: [string, string][] = [
  ['api/server.ts', "import { connectTemporal as x } from '../temporal/client';"],
  ['api/routes/statistics.ts', "import { openDatabase as x } from '../../db';"],
  ['worker/main.ts', "import { LabDriver as x } from '../drivers/lab/driver';"],
  ['temporal/client.ts', "import { tracer as x } from '../telemetry/tracer';"],
  ['drivers/lab/driver.ts', "import { newId as x } from '../../domain/ids';"],
  ['activities/index.ts', "import type { DeviceDriver as x } from '../drivers/contract';"],
  ['db/index.ts', "import { context as x } from '@opentelemetry/api';"],
  ['domain/states.ts', "import type { components as x } from '../spec/types';"],
  ['conformance/cli.ts', "import { loadSpec as x } from '../spec';"],
  ['scripts/admin.ts', "import { startApi as x } from '../api/server';"],
  ['workflows/index.ts', "import { provisionConnection as x } from './legacy/connection';"],
  [
    'workflows/legacy/connection.ts',
    "import { provisionConnectionV1 as x } from './connection-provisioning-v1';",
  ],
];

describe('the folder layout is enforced by lint', function () {
  this.timeout(60_000);

  for (const [file, line] of FORBIDDEN) {
    it(`rejects in ${path.dirname(file)}/: ${line.split(' from ')[1]}`, async () => {
      const messages = await restrictedImports(file, line);
      assert.equal(messages.length, 1, `expected one restricted import for ${line} in ${file}`);
    });
  }

  for (const [file, line] of ALLOWED) {
    it(`allows in ${path.dirname(file)}/: ${line.split(' from ')[1]}`, async () => {
      assert.deepEqual(await restrictedImports(file, line), []);
    });
  }
});
