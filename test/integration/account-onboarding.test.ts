import assert from 'node:assert/strict';
import { openDatabase } from '../../db';
import type { PendingMessage } from '../../db/repositories/outbox-repository';
import { RESOURCE_STATE } from '../../domain/search-attributes';
import { workflowIdOf } from '../../domain/workflow-ids';
import { accountChangedSignal } from '../../workflows';
import { recordHistory } from '../support/histories';
import { outboxRowOf, startDelivered } from '../support/outbox';
import { stack } from '../support/stack';
import { eventually } from '../support/wait';

const newMember = (name: string) => ({
  name,
  address: { country: 'DE', locality: 'Hamburg', postal_code: '20095', street_address: 'Jungfernstieg 1' },
});

describe('account on-boarding workflow', function () {
  // The first workflow of a run meets a worker and a server that have just started.
  this.timeout(120_000);
  it('keeps a new account requested, says what is missing, and moves it to production once it is there', async () => {
    const { db, temporal } = stack();
    const account = await db.accounts.create(newMember('Elbe Networks'));
    assert.equal(account.state, 'requested');
    const workflowId = workflowIdOf('account', account.id);
    // The outbox sends the start once the account has committed.
    await startDelivered(workflowId);

    const waiting = await eventually(
      'the status to name the missing legal contact',
      async () => {
        const current = await db.accounts.findById(account.id);
        return current?.status.length ? current : undefined;
      },
      60_000,
    );
    assert.equal(waiting.state, 'requested');
    assert.deepEqual(
      waiting.status.map((s) => [s.tag, s.attrs.role]),
      [['contact_role_missing', 'legal']],
    );

    const contact = await db.contacts.createContact({
      managing_account: account.id,
      consuming_account: account.id,
      external_ref: null,
      name: 'Elbe Legal',
      email: 'legal@elbe.example',
      telephone: '+4940123456',
    });
    await db.contacts.assignRole({ role: 'role-legal', contact: contact.id });
    const handle = temporal.client.workflow.getHandle(workflowId);
    await handle.signal(accountChangedSignal);

    assert.equal(await handle.result(), 'production');
    await recordHistory('onboardAccount', 'production', workflowId);
    const done = await db.accounts.findById(account.id);
    assert.equal(done?.state, 'production');
    assert.deepEqual(done?.status, []);
    const description = await handle.describe();
    assert.deepEqual(description.typedSearchAttributes.get(RESOURCE_STATE), 'production');

    const events = await db.events.listForAccount(account.id);
    assert.deepEqual(
      events.map((e) => e.type),
      ['account.created', 'contact.created', 'role_assignment.created', 'account.state_changed'],
    );
    assert.deepEqual(events[3].payload, {
      id: account.id,
      from: 'requested',
      to: 'production',
      event: 'go_live',
    });
  });

  it('ends on-boarding with the account deleted while it waits', async () => {
    const { db, temporal } = stack();
    const account = await db.accounts.create(newMember('Trave Carrier'));
    const workflowId = workflowIdOf('account', account.id);
    // The outbox sends the start once the account has committed.
    await startDelivered(workflowId);
    await eventually('the status to name what is missing', async () =>
      (await db.accounts.findById(account.id))?.status.length ? true : undefined,
    );
    await db.accounts.remove(account.id, () => undefined);
    const handle = temporal.client.workflow.getHandle(workflowId);
    assert.equal(await handle.result(), 'deleted');
    await recordHistory('onboardAccount', 'cancel-before-production', workflowId);
    assert.equal(await db.accounts.findById(account.id), null);
  });

  it('starts the workflow through the outbox relay when the first start did not happen', async () => {
    const { temporal, config } = stack();
    // Written through a handle of its own, which sends nothing: as if the process had died right
    // after the commit.
    const crashed = openDatabase({ url: config.databaseUrl, apiSecretHashKey: config.apiSecretHashKey });
    const account = await crashed.accounts.create(newMember('Alster Transit')).finally(() => crashed.close());
    const workflowId = workflowIdOf('account', account.id);
    assert.equal((await outboxRowOf(workflowId)).delivered, 0);
    await startDelivered(workflowId, 'the relay to deliver the start');
    const description = await temporal.client.workflow.getHandle(workflowId).describe();
    assert.equal(description.type, 'onboardAccount');
  });

  it('treats a second start of the same workflow as delivered', async () => {
    const { db, api } = stack();
    // The start as the outbox hands it on at commit, kept on its way to the API's sender.
    const sent: PendingMessage[] = [];
    const stopKeeping = db.outbox.sendCommittedWith((message) => {
      sent.push(message);
      api.starter.sendSoon(message);
    });
    const account = await db.accounts.create(newMember('Binnen Hosting')).finally(stopKeeping);
    const start = sent.find((message) => message.workflowId === workflowIdOf('account', account.id));
    assert.ok(start, 'the outbox hands on the start at commit');
    await startDelivered(start.workflowId);
    assert.equal(await api.starter.deliver(start), true);
  });
});
