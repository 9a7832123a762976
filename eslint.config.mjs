// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Modules that would make workflow code non-deterministic or drag I/O into the workflow sandbox. */
const forbiddenInWorkflows = [
  { group: ['node:*'], message: 'Workflow code must stay deterministic: no Node built-ins.' },
  {
    group: ['express', 'express/*', 'sequelize', 'sequelize/*', 'mysql2', 'mysql2/*', 'pino', 'pino-*'],
    message: 'Workflow code must not do I/O.',
  },
  {
    group: ['**/db', '**/db/*', '**/api', '**/api/*', '**/activities/drivers', '**/activities/drivers/*'],
    message: 'Workflows reach databases, HTTP and devices only through activities.',
  },
  {
    group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
    message: 'Only @temporalio/workflow belongs in workflow code.',
  },
];
const nodeBuiltins = [
  'fs',
  'os',
  'path',
  'child_process',
  'http',
  'https',
  'net',
  'crypto',
  'dns',
  'timers',
  'worker_threads',
  'process',
  'util',
  'stream',
  'events',
];

export default tseslint.config(
  {
    ignores: ['node_modules/**', 'dist/**', '.data/**', 'eslint.config.mjs', 'spec/types.ts', 'spec/docs/**'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'separate-type-imports' }],
    },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({
            name,
            message: 'Workflow code must stay deterministic: no Node built-ins.',
          })),
          patterns: [
            ...forbiddenInWorkflows,
            {
              group: ['**/activities', '**/activities/*'],
              allowTypeImports: true,
              message: 'Import activities only as `import type`; call them through proxyActivities.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests inspect JSON response bodies of unknown shape; the contract check validates them.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-expressions': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
