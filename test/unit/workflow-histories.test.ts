import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { format } from 'prettier';
import * as workflows from '../../workflows';
import * as framing from '../../workflows/lifecycle';
import type { WorkflowType } from '../support/workflow-histories';
import {
  FRAMING_MODULE,
  HISTORIES,
  WORKFLOW_TYPES,
  historyName,
  nextManifest,
  notApplicable,
  pathsOf,
  readManifest,
} from '../support/workflow-histories';
import type { SourceReader } from '../support/workflow-source';
import { ROOT, workflowSourceHash, workflowSources } from '../support/workflow-source';

const manifest = readManifest();
const types = Object.keys(WORKFLOW_TYPES) as WorkflowType[];
const disk: SourceReader = (file) => readFileSync(path.join(ROOT, file), 'utf8');
/** Reads the modules from disk, but `file` as `edit` turns it. */
const editing =
  (file: string, edit: (text: string) => string): SourceReader =>
  (name) =>
    name === file ? edit(disk(name)) : disk(name);
const replacing = (text: string, from: string, to: string) => {
  assert.ok(text.includes(from), `the source holds ${JSON.stringify(from)}`);
  return text.replace(from, to);
};

const WHAT_TO_DO =
  'If the change alters the commands of runs in flight, guard it with patched() from @temporalio/workflow ' +
  '(or start a new workflow type); then run `npm run histories:record` and commit the new files under ' +
  'test/fixtures/histories/ with the manifest. Keep the older histories: runs begun on older code replay them.';

describe('recorded workflow histories', () => {
  it('cover every workflow the worker runs: each workflow function of workflows/index.ts has a manifest entry', () => {
    const exported = Object.entries(workflows)
      .filter(([name, value]) => typeof value === 'function' && !(name in framing))
      .map(([name]) => name)
      .sort();
    assert.deepEqual(
      [...types].sort(),
      exported,
      `WORKFLOW_TYPES in test/support/workflow-histories.ts names every workflow (${FRAMING_MODULE} is the shared framing)`,
    );
    assert.deepEqual(Object.keys(manifest).sort(), exported, 'the manifest has an entry for every workflow');
  });

  for (const type of types) {
    describe(type, () => {
      const definition = WORKFLOW_TYPES[type];
      const entry = manifest[type];

      it(`is exported by ${definition.file}`, () => {
        assert.match(disk(definition.file), new RegExp(`^export (async )?function ${type}\\b`, 'm'));
      });

      it('has its histories recorded at its current source hash, one for every path it has', () => {
        const current = workflowSourceHash(definition.file);
        assert.ok(entry, `no manifest entry for ${type}: ${WHAT_TO_DO}`);
        assert.equal(
          entry.sourceHash,
          current,
          `${definition.file} (or a module of workflows/ or domain/ it imports) changed since its histories ` +
            `were recorded at ${entry.sourceHash}; it is ${current} now. ${WHAT_TO_DO}`,
        );
        const missing = pathsOf(type).filter(
          (pathName) =>
            notApplicable(type, pathName) === undefined &&
            !existsSync(path.join(HISTORIES, type, historyName(pathName, current))),
        );
        assert.deepEqual(missing, [], `paths of ${type} without a history at ${current}. ${WHAT_TO_DO}`);
      });

      it('lists every path, each with a history file or the reason it has none', () => {
        assert.ok(entry, `no manifest entry for ${type}`);
        assert.deepEqual(Object.keys(entry.paths), pathsOf(type), 'every path of the type, in order');
        for (const pathName of pathsOf(type)) {
          const listed = entry.paths[pathName];
          const reason = notApplicable(type, pathName);
          if (reason !== undefined) {
            assert.deepEqual(listed, { notApplicable: reason }, `${type} ${pathName}`);
            continue;
          }
          assert.ok(listed && 'history' in listed, `${type} has no history of ${pathName}: ${WHAT_TO_DO}`);
          assert.ok(
            existsSync(path.join(HISTORIES, type, listed.history)),
            `${type}/${listed.history} is listed but missing`,
          );
        }
      });
    });
  }

  it('has a manifest in line with the workflow types as defined', () => {
    assert.deepEqual(manifest, nextManifest(manifest), 'run `npm run histories:record` to bring it in line');
  });

  it('records with `npm run histories:record`, which runs exactly the integration and fabric tests that record', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const script = scripts['histories:record'];
    assert.ok(script, 'package.json has a histories:record script');
    assert.match(script, /^RECORD_HISTORIES=1 mocha /);
    assert.match(script, /--require tsx\/cjs --require test\/integration\/hooks\.ts /);
    const run = script.split(/\s+/).filter((word) => word.endsWith('.test.ts'));
    const recording = ['test/integration', 'test/fabric'].flatMap((folder) =>
      readdirSync(path.join(ROOT, folder))
        .filter((name) => name.endsWith('.test.ts'))
        .filter((name) => /\brecordHistory\(/.test(readFileSync(path.join(ROOT, folder, name), 'utf8')))
        .map((name) => `${folder}/${name}`),
    );
    assert.deepEqual(run.sort(), recording.sort());
  });
});

describe('the source hash of a workflow type', () => {
  const NS = 'workflows/network-service-provisioning.ts';

  it('is twelve hex digits, the same every time', () => {
    for (const type of types) {
      const hash = workflowSourceHash(WORKFLOW_TYPES[type].file);
      assert.match(hash, /^[0-9a-f]{12}$/);
      assert.equal(workflowSourceHash(WORKFLOW_TYPES[type].file), hash);
    }
  });

  it('covers the workflow file and the modules of workflows/ and domain/ it imports as values, not types', () => {
    assert.deepEqual(
      workflowSources(NS).map((source) => source.file),
      [
        'domain/errors.ts',
        'domain/failures.ts',
        'domain/search-attributes.ts',
        'domain/states.ts',
        'domain/status.ts',
        'workflows/activity-proxies.ts',
        'workflows/lifecycle.ts',
        NS,
      ],
    );
    // activities/traffic is imported for a type only; nothing else is imported.
    assert.deepEqual(
      workflowSources('workflows/traffic-statistics.ts').map((source) => source.file),
      ['workflows/traffic-statistics.ts'],
    );
    const typeOnly = editing('workflows/traffic-statistics.ts', (text) =>
      text.replace(
        /^/,
        "import type { StatusEntry } from '../domain/status';\nexport type S = StatusEntry;\n",
      ),
    );
    assert.deepEqual(
      workflowSources('workflows/traffic-statistics.ts', typeOnly).map((source) => source.file),
      ['workflows/traffic-statistics.ts'],
    );
  });

  it('changes with a change of what a workflow does, in its file or in a module it imports', () => {
    const before = workflowSourceHash(NS);
    const ownFile = editing(NS, (text) =>
      replacing(text, 'await frame.look();', 'await frame.look();\n      await frame.look();'),
    );
    assert.notEqual(workflowSourceHash(NS, ownFile), before);
    const shorterWait = editing(NS, (text) =>
      replacing(text, 'Math.min(recheckMs, 2_000)', 'Math.min(recheckMs, 1_000)'),
    );
    assert.notEqual(workflowSourceHash(NS, shorterWait), before);

    // The framing changes every workflow built on it, and only those.
    const framingEdit = editing(FRAMING_MODULE, (text) =>
      replacing(text, "if (!latest) return 'deleted';", "if (!latest) return 'cancelled';"),
    );
    for (const type of types) {
      const { file } = WORKFLOW_TYPES[type];
      const onFraming = workflowSources(file).some((source) => source.file === FRAMING_MODULE);
      assert.equal(workflowSourceHash(file, framingEdit) !== workflowSourceHash(file), onFraming, type);
    }

    const domainEdit = editing('domain/states.ts', (text) => `${text}\nexport const ADDED = 1;\n`);
    assert.notEqual(workflowSourceHash(NS, domainEdit), before);
  });

  it('stays the same when only comments or the layout change', async () => {
    for (const type of types) {
      const { file } = WORKFLOW_TYPES[type];
      const before = workflowSourceHash(file);
      const commented = editing(file, (text) =>
        `// A note on top.\n${text}`
          .replace(/\/\*\*/g, '/** Reworded:')
          .replace(/\n\n/g, '\n\n// Another note.\n'),
      );
      assert.equal(workflowSourceHash(file, commented), before, `${type}: comments`);
      const original = disk(file);
      const relaid = await format(original, {
        filepath: path.join(ROOT, file),
        printWidth: 60,
        singleQuote: false,
        trailingComma: 'none',
        tabWidth: 4,
      });
      assert.notEqual(relaid, original);
      assert.equal(
        workflowSourceHash(
          file,
          editing(file, () => relaid),
        ),
        before,
        `${type}: layout`,
      );
    }
  });
});
