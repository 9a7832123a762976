/**
 * The types of the failures activities end with (`ApplicationFailure.type`), as workflows read
 * them. Activities translate every error of the stores, drivers and cloud providers into these
 * (activities/failures.ts); workflows match nothing else.
 */
export const FAILURE_TYPES = {
  /** The resource is gone: deleted while its workflow ran. */
  notFound: 'NotFound',
  /** The resource cannot take the event from the state it is in: something moved it on meanwhile. */
  invalidTransition: 'InvalidTransition',
} as const;

/** A device refused, and retrying cannot help (`DriverError:<code>`). */
export const driverFailureType = (code: string): string => `DriverError:${code}`;

/** A cloud provider refused, and retrying cannot help (`CloudProviderError:<code>`). */
export const cloudFailureType = (code: string): string => `CloudProviderError:${code}`;
