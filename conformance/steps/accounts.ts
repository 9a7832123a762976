/**
 * What the suite writes into the accounts it creates.
 */
/** The address of the accounts the suite creates. */
export const ACCOUNT_ADDRESS = {
  country: 'DE',
  locality: 'Berlin',
  postal_code: '10115',
  street_address: 'Conformance Str. 1',
};
