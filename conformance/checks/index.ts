import type { OpenApiDocument } from '../../spec';
import { specOperations } from '../../spec';
import type { CheckDefinition } from '../runner';
import { AUTH_CHECKS, tokenRequiredChecks } from './auth';
import { CHANGE_CHECK, EARLY_REQUEST_CHECK } from './circuit-changes';
import { CIRCUIT_CONFIG_CHECKS } from './circuit-configs';
import { CIRCUIT_RULE_CHECKS } from './circuit-rules';
import { CIRCUIT_CHECKS, CIRCUIT_READ_CHECKS } from './circuits';
import { CLIENT_CHECKS, CLIENT_READ_CHECKS } from './clients';
import { collectionChecks } from './collections';
import { CONFIG_CHECKS } from './configs';
import { CONNECTION_READ_CHECKS } from './connections';
import { DEPENDENCY_CHECKS } from './dependencies';
import { DISCOVERY_CHECKS } from './discovery';
import { ERROR_CHECKS, PROPERTIES_CHECKS, REFUSAL_CHECKS } from './errors';
import { EVENT_CHECKS } from './events';
import { IDEMPOTENCY_CHECKS } from './idempotency';
import { ISOLATION_CHECKS } from './isolation';
import { LIFECYCLE_CHECKS } from './lifecycle';
import { LIMIT_CHECKS } from './limits';
import { ORDER_CHECKS } from './orders';
import { PREREQUISITE_CHECKS } from './prerequisites';
import { SERVICE_DEPENDENCY_CHECKS } from './service-dependencies';
import { SESSION_CHECKS } from './sessions';
import { STATISTICS_CHECKS } from './statistics';
import { statusChecks } from './statuses';
/**
 * The registry: every check, in the order a run takes them (discovery first, mutations last, then
 * the 400s and the rate limits the whole run met).
 */
export function allChecks(document: OpenApiDocument): CheckDefinition[] {
  const checks = [
    ...DISCOVERY_CHECKS,
    ...AUTH_CHECKS,
    ...ERROR_CHECKS,
    // The full profile provisions what the checks after them need.
    ...PREREQUISITE_CHECKS,
    ...tokenRequiredChecks(document),
    ...collectionChecks(document),
    ...ISOLATION_CHECKS,
    ...EVENT_CHECKS,
    ...CONNECTION_READ_CHECKS,
    ...STATISTICS_CHECKS,
    ...CIRCUIT_READ_CHECKS,
    ...CLIENT_READ_CHECKS,
    ...statusChecks(document),
    ...LIFECYCLE_CHECKS,
    ...REFUSAL_CHECKS,
    ...IDEMPOTENCY_CHECKS,
    ...CLIENT_CHECKS,
    ...ORDER_CHECKS,
    ...CONFIG_CHECKS,
    ...SESSION_CHECKS,
    ...CIRCUIT_CHECKS,
    ...CIRCUIT_RULE_CHECKS,
    EARLY_REQUEST_CHECK,
    ...CIRCUIT_CONFIG_CHECKS,
    CHANGE_CHECK,
    ...DEPENDENCY_CHECKS,
    ...SERVICE_DEPENDENCY_CHECKS,
    // Last: they judge every 400 and every 429 the run met.
    ...PROPERTIES_CHECKS,
    ...LIMIT_CHECKS,
  ];
  const ids = new Set<string>();
  for (const check of checks) {
    if (ids.has(check.id)) throw new Error(`two checks share the id ${check.id}`);
    ids.add(check.id);
  }
  return checks;
}

/** Operations of the document that no check exercises. */
export function uncoveredOperations(document: OpenApiDocument, checks: readonly CheckDefinition[]): string[] {
  const covered = new Set(checks.flatMap((check) => check.operations));
  return specOperations(document)
    .map((op) => op.operationId)
    .filter((id) => !covered.has(id));
}
