import { ValidationError } from '../../domain/errors';
import type { RequestValidators } from '../request-validation';

/**
 * The body of a change (PUT or PATCH) of a resource whose schema depends on its `type` (a network
 * service, a service config, a feature config), validated as the document states it, with the type
 * taken from the stored resource where the body leaves it out (pyixapi sends partial updates so).
 * Filling in the type must not turn what is no JSON object into an empty change: a missing body or
 * JSON null is refused as the body the document requires, anything else as not an object.
 */
export function typedChange(
  validators: RequestValidators,
  operationId: string,
  body: unknown,
  storedType: string,
): Record<string, unknown> {
  if (body === undefined || body === null)
    throw new ValidationError([{ name: 'body', reason: 'A JSON request body is required.' }]);
  if (typeof body !== 'object' || Array.isArray(body))
    throw new ValidationError([{ name: 'body', reason: 'Must be a JSON object.' }]);
  const given = body as Record<string, unknown>;
  validators.body(operationId, { type: storedType, ...given });
  return given;
}
