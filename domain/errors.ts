/**
 * The domain error tree. Each error knows its IX-API problem type; one middleware turns them into
 * problem responses, and activities mark the permanent ones non-retryable.
 */

export interface PropertyError {
  /** Path of the failing property, e.g. `address.country` or `api_key`. */
  name: string;
  reason: string;
}

export interface Conflict {
  resource_type: string;
  resource_id: string;
  resource_property: string | null;
  remote_resource_type: string;
  remote_resource_id: string;
}

export type ProblemTypeName =
  | 'validation-error'
  | 'authentication-error'
  | 'signature-expired'
  | 'not-authenticated'
  | 'permission-denied'
  | 'not-found'
  | 'unable-to-fulfill'
  | 'cancellation-policy-error'
  | 'method-not-allowed'
  | 'unsupported-media-type'
  | 'payload-too-large'
  | 'not-acceptable'
  | 'server-error';

export const PROBLEM_TYPE_BASE = 'https://errors.ix-api.net/v2/';

export function problemTypeUri(name: ProblemTypeName): string {
  return `${PROBLEM_TYPE_BASE}${name}.html`;
}

export abstract class DomainError extends Error {
  abstract readonly status: number;
  abstract readonly typeName: ProblemTypeName;
  abstract readonly title: string;
  /** Extra members of the problem body (`properties`, `conflicts`, ...). */
  extensions(): Record<string, unknown> {
    return {};
  }
}

export class ValidationError extends DomainError {
  readonly status = 400;
  readonly typeName = 'validation-error';
  readonly title = 'Some fields did not validate.';
  constructor(readonly properties: PropertyError[]) {
    super(properties.map((p) => `${p.name}: ${p.reason}`).join('; ') || 'validation failed');
  }
  override extensions() {
    return { properties: this.properties };
  }
}

export class AuthenticationError extends DomainError {
  readonly status = 401;
  readonly typeName = 'authentication-error';
  readonly title = 'Authentication Credentials Invalid';
}

export class SignatureExpiredError extends DomainError {
  readonly status = 401;
  readonly typeName = 'signature-expired';
  readonly title = 'Authentication Credentials Invalid';
}

export class PermissionDeniedError extends DomainError {
  readonly status = 403;
  readonly typeName = 'permission-denied';
  readonly title = 'You do not have permission to perform this action.';
}

export class NotFoundError extends DomainError {
  readonly status = 404;
  readonly typeName = 'not-found';
  readonly title = 'Not found.';
}

/**
 * A request that is well-formed but cannot be carried out as things stand. Like every 400 it names
 * what to change: `property` is the request property (or path parameter, `id`) at fault, and the
 * message says why and what would work; `conflicts` name the resources in the way.
 */
export class UnableToFulfillError extends DomainError {
  readonly status = 400;
  readonly typeName = 'unable-to-fulfill';
  readonly title = 'Unable to fulfill your request.';
  constructor(
    readonly property: string,
    message: string,
    readonly conflicts: Conflict[] = [],
  ) {
    super(message);
  }
  override extensions() {
    return { properties: [{ name: this.property, reason: this.message }], conflicts: this.conflicts };
  }
}

/** Raised when a lifecycle event is not allowed from the resource's current state. */
export class InvalidTransitionError extends UnableToFulfillError {
  constructor(
    readonly from: string,
    readonly event: string,
  ) {
    super('state', `a resource in state "${from}" does not accept "${event}"`);
  }
}

/** A cancellation asked for a day the resource's cancellation policy does not allow. */
export class CancellationPolicyError extends DomainError {
  readonly status = 400;
  readonly typeName = 'cancellation-policy-error';
  readonly title = 'The requested decommission date is outside the notice period.';
  constructor(
    message: string,
    readonly policy: { decommission_at: string; charged_until: string },
  ) {
    super(message);
  }
  override extensions() {
    return { properties: [{ name: 'decommission_at', reason: this.message }], ...this.policy };
  }
}

/** HTTP-level problems that are not part of a resource's rules (wrong method, media type, size). */
export class HttpProblem extends DomainError {
  constructor(
    readonly status: number,
    readonly typeName: ProblemTypeName,
    readonly title: string,
    message: string,
    private readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
  override extensions() {
    return this.extra;
  }
}
