import type { Transaction } from 'sequelize';
import { Op } from 'sequelize';
import { ACCOUNT_CHANGED_SIGNAL, onboardingWorkflowId } from '../../domain/onboarding';
import type { Models } from '../models';
import type { OutboxRepository } from './outbox-repository';

/**
 * Queues, inside the caller's transaction, a signal for the on-boarding workflow of each account
 * that is still being on-boarded (state `requested`); on-boarded accounts have nothing waiting.
 * Call it before deleting an account, while its row still says what state it is in.
 */
export async function signalWaitingOnboarding(
  deps: { models: Models; outbox: OutboxRepository },
  accountIds: readonly string[],
  transaction: Transaction,
): Promise<void> {
  const waiting = await deps.models.Account.findAll({
    attributes: ['id'],
    where: { id: { [Op.in]: [...new Set(accountIds)] }, state: 'requested' },
    transaction,
  });
  for (const account of waiting) {
    const workflowId = onboardingWorkflowId(account.get({ plain: true }).id);
    await deps.outbox.enqueue({ workflowId, signal: ACCOUNT_CHANGED_SIGNAL }, transaction);
  }
}
