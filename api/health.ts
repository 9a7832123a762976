export type HealthStatus = 'pass' | 'warn' | 'fail';

export interface Dependency {
  /** Component name as it appears in `checks`, e.g. `database`. */
  name: string;
  componentType: string;
  /** What the whole service is when this dependency is down. */
  whenDown: Exclude<HealthStatus, 'pass'>;
  probe(): Promise<void>;
}

export interface HealthReport {
  status: HealthStatus;
  version: string;
  releaseId: string;
  serviceId: string;
  description: string;
  checks: Record<string, Array<Record<string, string>>>;
  notes?: string[];
  output?: string;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

const RANK: Record<HealthStatus, number> = { pass: 0, warn: 1, fail: 2 };

/**
 * Probes every dependency in parallel, each bounded by `timeoutMs`, and folds the results into an
 * API health-check document: `version` is the API's major version as a string, `releaseId` the
 * service version. Probe failures are reported, never thrown.
 */
export function createHealthCheck(options: {
  dependencies: Dependency[];
  timeoutMs: number;
  releaseId: string;
}): () => Promise<HealthReport> {
  return async () => {
    const results = await Promise.all(
      options.dependencies.map(async (dependency) => {
        const started = process.hrtime.bigint();
        let error: string | undefined;
        try {
          await withTimeout(dependency.probe(), options.timeoutMs);
        } catch (cause) {
          error = cause instanceof Error ? cause.message : String(cause);
        }
        const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
        const status: HealthStatus = error === undefined ? 'pass' : dependency.whenDown;
        return { dependency, status, error, elapsedMs };
      }),
    );
    const status = results.reduce<HealthStatus>(
      (worst, r) => (RANK[r.status] > RANK[worst] ? r.status : worst),
      'pass',
    );
    const checks: HealthReport['checks'] = {};
    for (const { dependency, status: componentStatus, error, elapsedMs } of results) {
      const check: Record<string, string> = {
        componentType: dependency.componentType,
        status: componentStatus,
        observedValue: elapsedMs.toFixed(1),
        observedUnit: 'ms',
        time: new Date().toISOString(),
      };
      if (error !== undefined) check.output = error;
      checks[`${dependency.name}:responseTime`] = [check];
    }
    const report: HealthReport = {
      status,
      version: '2',
      releaseId: options.releaseId,
      serviceId: 'ixapi-provisioning',
      description: 'IX-API 2.6.0 provisioning service',
      checks,
    };
    const down = results.filter((r) => r.error !== undefined);
    if (down.length > 0) report.output = down.map((r) => `${r.dependency.name}: ${r.error}`).join('; ');
    return report;
  };
}
