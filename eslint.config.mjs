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
    regex: '^(\\.\\./)+(db|api|drivers|temporal|telemetry|worker|config|conformance|scripts)(/|$)',
    message: 'Workflows reach databases, HTTP and devices only through activities.',
  },
  {
    group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity'],
    message: 'Only @temporalio/workflow belongs in workflow code.',
  },
];
/**
 * The project's folders, each one role, and which of the others its code may import (the layout
 * table of docs/architecture.md). `workflows/` has rules of its own below; `scripts/` and `test/`
 * wire everything together and may import anything.
 */
const FOLDERS = [
  'spec',
  'domain',
  'config',
  'telemetry',
  'db',
  'drivers',
  'activities',
  'temporal',
  'api',
  'workflows',
  'worker',
  'conformance',
  'scripts',
  'test',
];
/** @type {Record<string, string[]>} */
const MAY_IMPORT = {
  spec: [],
  domain: ['spec'],
  config: [],
  telemetry: ['config'],
  db: ['domain', 'spec'],
  drivers: ['domain', 'telemetry'],
  activities: ['domain', 'db', 'drivers', 'telemetry'],
  temporal: ['domain', 'db', 'config', 'telemetry'],
  api: ['domain', 'db', 'spec', 'config', 'telemetry', 'temporal'],
  worker: ['domain', 'db', 'spec', 'config', 'telemetry', 'temporal', 'activities', 'drivers', 'workflows'],
  // The conformance suite speaks only HTTP to the implementation under test.
  conformance: ['spec'],
};
/** Packages that do I/O of a kind a folder must leave to others. */
/** @type {Record<string, string[]>} */
const PACKAGES_KEPT_OUT = {
  spec: ['express', 'sequelize', 'mysql2', 'pino', '@temporalio/*'],
  domain: [
    'express',
    'sequelize',
    'mysql2',
    'pino',
    '@temporalio/client',
    '@temporalio/worker',
    '@temporalio/activity',
  ],
  db: ['express', '@temporalio/*'],
  drivers: ['express', '@temporalio/*'],
  conformance: ['sequelize', 'mysql2', '@temporalio/*'],
};
const folderBoundaries = Object.entries(MAY_IMPORT).map(([folder, allowed]) => {
  const others = FOLDERS.filter((name) => name !== folder && !allowed.includes(name));
  return {
    files: [`${folder}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${others.join('|')})(/|$)`,
              message: `${folder}/ may import only ${allowed.length ? allowed.map((f) => `${f}/`).join(', ') : 'packages'} (docs/architecture.md, layout).`,
            },
            ...(PACKAGES_KEPT_OUT[folder]
              ? [{ group: PACKAGES_KEPT_OUT[folder], message: `not a package for ${folder}/ code.` }]
              : []),
          ],
        },
      ],
    },
  };
});

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
    ignores: [
      'node_modules/**',
      'dist/**',
      'conformance/dist/**',
      'pack/**',
      '.data/**',
      'eslint.config.mjs',
      'spec/types.ts',
      'spec/docs/**',
    ],
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
    // conformance/ is also an npm package whose package.json points at its compiled form: the
    // folder itself resolves there once packed, so the repository imports its source by file.
    files: ['test/**/*.ts', 'scripts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+conformance$',
              message: 'Import conformance/index: the folder resolves to the compiled package.',
            },
          ],
        },
      ],
    },
  },
  ...[false, true].map((mayReachLegacy) => ({
    // Current workflows never import superseded code; only the entry that picks a run's code
    // (workflows/index.ts) and workflows/legacy/ itself reach it.
    files: mayReachLegacy ? ['workflows/index.ts', 'workflows/legacy/**/*.ts'] : ['workflows/**/*.ts'],
    ...(mayReachLegacy ? {} : { ignores: ['workflows/index.ts', 'workflows/legacy/**/*.ts'] }),
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
            ...(mayReachLegacy
              ? []
              : [
                  {
                    group: ['**/legacy', '**/legacy/*'],
                    message:
                      'Current workflows do not import workflows/legacy/: the code kept for runs in flight.',
                  },
                ]),
          ],
        },
      ],
    },
  })),
  ...folderBoundaries,
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
