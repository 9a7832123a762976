import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './workflow-source';

/** Where recorded histories live: `<workflow type>/<path>@<source hash>.json`, and the manifest. */
export const HISTORIES = path.join(ROOT, 'test/fixtures/histories');
export const MANIFEST = path.join(HISTORIES, 'manifest.json');

/** The ways through its life every workflow type is recorded on, unless it does not have one. */
export const COMMON_PATHS = {
  production: 'from the order to production',
  change: 'a change carried out in production, back to production',
  decommission: 'decommissioned on its day (or when an operator brings the day forward)',
  'cancel-before-production': 'cancelled before it went into production',
  'error-retry': 'a step fails for good; an operator asks to try again',
  'operator-retest': 'a test fails and an operator is needed; the operator asks to test again',
} as const;
export type CommonPath = keyof typeof COMMON_PATHS;

export interface WorkflowTypeDefinition {
  /** The module that exports the workflow function. */
  readonly file: string;
  /**
   * Where the code that new runs live is, when `file` only picks between it and code kept for runs
   * begun before (workflows/legacy/): its signals and queries are what the type takes now.
   */
  readonly runs?: string;
  /** The common paths this workflow type does not have, each with the reason. */
  readonly notApplicable: Readonly<Partial<Record<CommonPath, string>>>;
  /** Paths of its own, besides the common ones, each with what it is. */
  readonly ownPaths?: Readonly<Record<string, string>>;
}

/**
 * Every workflow type the worker runs. Each applicable path has a recorded history at the
 * workflow's current source hash (see `workflowSourceHash`); the unit tests hold the manifest to it.
 */
export const WORKFLOW_TYPES = {
  provisionConnection: {
    file: 'workflows/legacy/connection.ts',
    runs: 'workflows/connection-provisioning.ts',
    notApplicable: {},
  },
  provisionNetworkService: {
    file: 'workflows/network-service-provisioning.ts',
    notApplicable: {
      'operator-retest':
        'A network service has no test of its own (its configs test their ends), so it never waits for retryTesting.',
    },
  },
  provisionNetworkServiceConfig: {
    file: 'workflows/network-service-config-provisioning.ts',
    notApplicable: {},
  },
  provisionNetworkFeatureConfig: {
    file: 'workflows/network-feature-config-provisioning.ts',
    notApplicable: {},
  },
  onboardAccount: {
    file: 'workflows/account-onboarding.ts',
    notApplicable: {
      change:
        'On-boarding ends when the account is in production; changes while it waits (contacts, roles) are part of the way there.',
      decommission: 'Accounts are deleted by the API, not decommissioned by a workflow.',
      'error-retry': 'On-boarding has no error state: its activities retry until they succeed.',
      'operator-retest': 'On-boarding tests nothing and takes no operator signal.',
    },
  },
  collectTrafficStatistics: {
    file: 'workflows/traffic-statistics.ts',
    notApplicable: {
      production: 'The collector is no resource with states: its life is the `sampling` path.',
      change: 'The collector takes no changes: a new interval means a new run.',
      decommission: 'The collector runs for ever (continuing as new); nothing decommissions it.',
      'cancel-before-production': 'Nobody orders or cancels the collector.',
      'operator-retest': 'The collector tests nothing and takes no operator signal.',
    },
    ownPaths: {
      sampling: 'sampling rounds, one per interval',
    },
  },
  superviseFabric: {
    file: 'workflows/fabric-supervision.ts',
    notApplicable: {
      production: 'The supervisor is no resource with states: its life is the `supervising` path.',
      change: 'The supervisor takes no changes: a new interval means a new run.',
      decommission: 'The supervisor runs for ever (continuing as new); nothing decommissions it.',
      'cancel-before-production': 'Nobody orders or cancels the supervisor.',
      'error-retry':
        'A failed round only sets the status (`lastError`) and the next round runs as every round does; it takes no operator signal.',
      'operator-retest': 'The supervisor tests nothing and takes no operator signal.',
    },
    ownPaths: {
      supervising: 'rounds, one per interval: dead processes brought back, devices reconciled',
    },
  },
} as const satisfies Record<string, WorkflowTypeDefinition>;

export type WorkflowType = keyof typeof WORKFLOW_TYPES;

/** The paths of a workflow type that are recorded. */
export type RecordedPath<T extends WorkflowType> =
  | Exclude<CommonPath, keyof (typeof WORKFLOW_TYPES)[T]['notApplicable']>
  | ((typeof WORKFLOW_TYPES)[T] extends { ownPaths: infer Own } ? keyof Own & string : never);

/** The module of workflows/ whose exports are the framing the lifecycle workflows share, not workflows. */
export const FRAMING_MODULE = 'workflows/lifecycle.ts';

const definition = (type: WorkflowType): WorkflowTypeDefinition => WORKFLOW_TYPES[type];

/** Every path of a workflow type, recorded or not, in a fixed order. */
export function pathsOf(type: WorkflowType): string[] {
  return [...Object.keys(COMMON_PATHS), ...Object.keys(definition(type).ownPaths ?? {})];
}

/** The reason a path of a workflow type is not recorded, or undefined when it is. */
export function notApplicable(type: WorkflowType, pathName: string): string | undefined {
  return (definition(type).notApplicable as Record<string, string | undefined>)[pathName];
}

export const historyName = (pathName: string, sourceHash: string): string => `${pathName}@${sourceHash}.json`;

/** A path in the manifest: the history recorded at the manifest's source hash, or why there is none. */
export type ManifestPath = { history: string } | { notApplicable: string };

export interface ManifestEntry {
  file: string;
  /** The source hash the workflow type's current histories were recorded at. */
  sourceHash: string | null;
  paths: Record<string, ManifestPath>;
}

export type Manifest = Record<string, ManifestEntry>;

export function readManifest(): Manifest {
  return existsSync(MANIFEST) ? (JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest) : {};
}

/**
 * The manifest after recording `pathName` of `type` at `sourceHash` (or without a recording, just
 * brought in line with `WORKFLOW_TYPES`): paths keep the histories named before until they are
 * recorded again.
 */
export function nextManifest(
  current: Manifest,
  recorded?: { type: WorkflowType; pathName: string; sourceHash: string },
): Manifest {
  const next: Manifest = {};
  for (const type of Object.keys(WORKFLOW_TYPES) as WorkflowType[]) {
    const before = current[type];
    const now = recorded?.type === type;
    const paths: Record<string, ManifestPath> = {};
    for (const pathName of pathsOf(type)) {
      const reason = notApplicable(type, pathName);
      const previous = before?.paths[pathName];
      if (reason !== undefined) paths[pathName] = { notApplicable: reason };
      else if (now && recorded.pathName === pathName)
        paths[pathName] = { history: historyName(pathName, recorded.sourceHash) };
      else if (previous && 'history' in previous) paths[pathName] = previous;
    }
    next[type] = {
      file: definition(type).file,
      sourceHash: now ? recorded.sourceHash : (before?.sourceHash ?? null),
      paths,
    };
  }
  return next;
}

/** Every recorded history, as paths relative to `HISTORIES` (`<type>/<file>.json`). */
export function historyFiles(): string[] {
  return readdirSync(HISTORIES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((dir) =>
      readdirSync(path.join(HISTORIES, dir.name))
        .filter((name) => name.endsWith('.json'))
        .map((name) => `${dir.name}/${name}`),
    )
    .sort();
}
