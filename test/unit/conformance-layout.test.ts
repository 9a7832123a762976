import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../../conformance');
const CHECKS = path.join(ROOT, 'checks');
/** The most lines a file of the suite may have: past it, it holds more than one idea. */
const MAX_LINES = 600;

/** Built or installed folders (`npm run conformance:pack` compiles into dist/), not sources. */
const NOT_SOURCES = new Set(['dist', 'node_modules']);

/** The .ts files under `folder`, as absolute paths. */
function sourcesIn(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) return NOT_SOURCES.has(entry.name) ? [] : sourcesIn(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The files of the project that `file` imports or re-exports from by a relative path. */
function localImports(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  return source.statements.flatMap((statement) => {
    const specifier =
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier;
    if (!specifier || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return [];
    const target = path.resolve(path.dirname(file), specifier.text);
    return [`${target}.ts`, path.join(target, 'index.ts')].filter((candidate) => existsSync(candidate));
  });
}

/** The check files among `files` that import another check file; only the registry lists them all. */
function checksImportingChecks(
  files: readonly string[],
  read = (file: string) => readFileSync(file, 'utf8'),
): string[] {
  const registry = path.join(CHECKS, 'index.ts');
  return files
    .filter((file) => path.dirname(file) === CHECKS && file !== registry)
    .flatMap((file) =>
      localImports(file, read(file))
        .filter((target) => path.dirname(target) === CHECKS)
        .map((target) => `${path.relative(ROOT, file)} imports ${path.relative(ROOT, target)}`),
    );
}

describe('the layout of the conformance suite', () => {
  const files = sourcesIn(ROOT);

  it('keeps checks apart: a check file imports steps, never another check file', () => {
    assert.deepEqual(checksImportingChecks(files), []);
  });

  it(`keeps every file at most ${MAX_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file, lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ file, lines }) => `${path.relative(ROOT, file)}: ${lines} lines`);
    assert.deepEqual(long, []);
  });

  it('catches a check file that imports another one', () => {
    const orders = path.join(CHECKS, 'orders.ts');
    const read = (file: string) =>
      file === orders ? "import { wholeList } from './collections';\n" : readFileSync(file, 'utf8');
    assert.deepEqual(checksImportingChecks([orders], read), [
      'checks/orders.ts imports checks/collections.ts',
    ]);
  });
});
