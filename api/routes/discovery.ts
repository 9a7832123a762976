import type { Schemas } from '../../spec';
import type { MountedOperation, OperationDefinition } from '../operations';
import type { HealthReport } from '../health';

export const SCHEMA_VERSION = '2.6.0';

export type SupportedTypes = Omit<
  Schemas['ApiImplementation'],
  'schema_version' | 'service_version' | 'supported_operations'
>;

/** GET /health and GET /implementation; both readable without a token. */
export function discoveryOperations(deps: {
  checkHealth: () => Promise<HealthReport>;
  serviceVersion: string;
  /** What is routed, known only once every operation is mounted. */
  mounted: () => readonly MountedOperation[];
  /** The resource types the routed operations serve. */
  supportedTypes: SupportedTypes;
}): OperationDefinition[] {
  return [
    {
      operationId: 'api_health_read',
      authenticated: false,
      async handle() {
        const report = await deps.checkHealth();
        return {
          status: report.status === 'fail' ? 503 : 200,
          body: report,
          headers: { 'Cache-Control': 'no-store' },
        };
      },
    },
    {
      operationId: 'api_implementation_read',
      authenticated: false,
      handle() {
        const body: Schemas['ApiImplementation'] = {
          schema_version: SCHEMA_VERSION,
          service_version: deps.serviceVersion,
          ...deps.supportedTypes,
          supported_operations: deps
            .mounted()
            .map((op) => op.operationId)
            .sort(),
        };
        return Promise.resolve({ status: 200, body });
      },
    },
  ];
}
