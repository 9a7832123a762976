import assert from 'node:assert/strict';
import { redactionPlanFor } from '../../api/redaction-plans';
import { redact } from '../../domain/redaction';
import { loadSpec } from '../../spec';

describe('redaction of sensitive properties', () => {
  const document = loadSpec();

  it('builds plans from the x-sensitive marks of the document', () => {
    const account = redactionPlanFor(document, 'Account');
    assert.deepEqual([...account.sensitive].sort(), [
      'address',
      'billing_information',
      'external_ref',
      'legal_name',
      'managing_account',
    ]);
    assert.deepEqual(account.zero, {}, 'no sensitive account property is required in the read form');
    const connection = redactionPlanFor(document, 'Connection');
    assert.ok(connection.sensitive.includes('billing_account'));
    assert.deepEqual(connection.zero, { billing_account: '' }, 'required and hidden: the empty string');
  });

  it('removes hidden properties and zeroes the required ones, leaving the input alone', () => {
    const plan = redactionPlanFor(document, 'Connection');
    const connection = {
      id: 'con-1',
      name: 'Uplink',
      billing_account: 'acc-1',
      external_ref: 'mine',
      purchase_order: 'PO-1',
      managing_account: 'acc-1',
    };
    const shown = redact(connection, plan);
    assert.deepEqual(shown, { id: 'con-1', name: 'Uplink', billing_account: '', managing_account: 'acc-1' });
    assert.equal(connection.billing_account, 'acc-1');
  });

  it('keeps only the listed properties when the plan says so (a discoverable account from outside)', () => {
    const plan = {
      ...redactionPlanFor(document, 'Account'),
      only: ['id', 'name', 'metro_area_network_presence'],
    };
    const shown = redact(
      {
        id: 'acc-1',
        name: 'Example',
        metro_area_network_presence: ['man-fra'],
        discoverable: true,
        state: 'production',
        legal_name: 'Example GmbH',
      },
      plan,
    );
    assert.deepEqual(shown, { id: 'acc-1', name: 'Example', metro_area_network_presence: ['man-fra'] });
  });

  it('refuses a schema the document does not have', () => {
    assert.throws(() => redactionPlanFor(document, 'NoSuchSchema'), /not in the OpenAPI document/);
  });
});
