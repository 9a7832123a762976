import path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

const root = path.resolve(__dirname, '../..');

let eslint: ESLint | undefined;

/**
 * Lints `code` as if it were the file `file` of the project (relative to its root), returning the
 * restricted-import messages. The project's configuration, less the rules that need type
 * information: the imports rule needs none, and building a program for every snippet would take
 * most of the time.
 */
export async function restrictedImports(file: string, code: string): Promise<string[]> {
  eslint ??= new ESLint({ cwd: root, overrideConfig: tseslint.configs.disableTypeChecked });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}
