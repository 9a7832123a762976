import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as workflows from '../../workflows';
import { WORKFLOW_TYPES } from '../support/workflow-histories';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** The signal and query definitions workflows/ exports, by the name of their export. */
const DEFINITIONS = new Map(
  Object.entries(workflows).flatMap(([exported, value]) => {
    const definition = value as { type?: unknown; name?: unknown };
    return (definition.type === 'signal' || definition.type === 'query') &&
      typeof definition.name === 'string'
      ? [[exported, { kind: definition.type, name: definition.name }] as const]
      : [];
  }),
);

/** `kind name` of each definition a source file sets a handler for. */
const handledIn = (source: string): string[] =>
  [...source.matchAll(/setHandler\(\s*(\w+)/g)].map(([, exported]) => {
    const definition = DEFINITIONS.get(exported);
    assert.ok(definition, `setHandler(${exported}): no exported signal or query of that name`);
    return `${definition.kind} ${definition.name}`;
  });

/** What each workflow type takes and answers: its own handlers, and the lifecycle's when it runs one. */
function expectedRows(): string[] {
  const lifecycle = handledIn(read('workflows/lifecycle.ts'));
  return Object.entries(WORKFLOW_TYPES).flatMap(([type, definition]) => {
    const source = read('runs' in definition ? definition.runs : definition.file);
    const handled = [...handledIn(source), ...(/\brunLifecycle\s*[<(]/.test(source) ? lifecycle : [])];
    return [...new Set(handled)].map((row) => `${type} ${row}`);
  });
}

/** The rows of the signals-and-queries table in docs/operating.md, cell by cell. */
function documentedRows(): string[][] {
  const doc = read('docs/operating.md');
  const start = doc.indexOf('## Workflows: their signals and queries');
  assert.ok(start >= 0, 'docs/operating.md has no section "Workflows: their signals and queries"');
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((cell) => cell.trim()),
    );
}

describe('docs/operating.md: every workflow’s signals and queries', () => {
  it('lists every signal and query each workflow type takes, and nothing else', () => {
    const listed = documentedRows().map(([type, what]) => {
      const match = /^(signal|query) `(\w+)`$/.exec(what);
      assert.ok(match, `"${what}" says neither signal \`name\` nor query \`name\``);
      return `${type.replace(/`/g, '')} ${match[1]} ${match[2]}`;
    });
    assert.deepEqual([...listed].sort(), expectedRows().sort());
  });

  it('says of each what input it takes, when it is accepted and what it does or answers', () => {
    for (const [type, what, input, accepted, does] of documentedRows()) {
      // No signal or query takes input today; the table says so rather than leaving it blank.
      assert.equal(input, 'none', `${type} ${what}: input`);
      assert.ok(accepted.length > 0, `${type} ${what}: when it is accepted`);
      assert.ok(does.length > 0, `${type} ${what}: what it does`);
      if (what.startsWith('query')) assert.match(does, /^`.+`$/, `${type} ${what}: an example answer`);
    }
  });
});
