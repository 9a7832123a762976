import { readFileSync } from 'node:fs';
import { CONFIG_VARIABLES } from './config-variables';
import { ConfigError } from './config-error';

/** Suffix of the variable naming a file that holds a variable's value (NAME_FILE for NAME). */
export const FILE_SUFFIX = '_FILE';

/**
 * The environment with every NAME_FILE of a configuration variable replaced by NAME, its value read
 * from that file (trailing whitespace and newlines removed), the way Docker and Kubernetes mount
 * secrets. NAME and NAME_FILE together, or a file that cannot be read or is empty, is an error;
 * messages name the variables and the path, never the content.
 */
export function resolveFileVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const resolved: NodeJS.ProcessEnv = { ...env };
  for (const { name } of CONFIG_VARIABLES) {
    const fileVariable = `${name}${FILE_SUFFIX}`;
    const file = env[fileVariable];
    if (file === undefined || file === '') continue;
    if (env[name] !== undefined && env[name] !== '') {
      throw new ConfigError(
        name,
        `is set together with ${fileVariable}; set only one of ${name} and ${fileVariable}`,
      );
    }
    let content: string;
    try {
      content = readFileSync(file, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(fileVariable, `cannot read the file "${file}" (${code})`);
    }
    const value = content.trimEnd();
    if (value === '') throw new ConfigError(fileVariable, `the file "${file}" is empty`);
    resolved[name] = value;
    delete resolved[fileVariable];
  }
  return resolved;
}
