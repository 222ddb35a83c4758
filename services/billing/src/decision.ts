import type { BillingDecision, RunOutcome } from '@quill/contracts';

/**
 * Charge or refund from how the run ended. The walking skeleton charges completed runs and
 * refunds the rest; the billing issue replaces this with the seed's frame-based rules.
 */
export function decide(outcome: RunOutcome): { decision: BillingDecision; reason: string } {
  if (outcome.terminal === 'complete') return { decision: 'charge', reason: 'completed' };
  return { decision: 'refund', reason: `${outcome.terminal}:${outcome.reason}` };
}
