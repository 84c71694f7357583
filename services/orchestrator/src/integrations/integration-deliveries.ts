import type { IntegrationEvaluator, IntegrationWork } from '../deliveries/delivery-processor';

/**
 * The integrations a delivery may belong to (a GitHub App's, a Slack app's webhook), each asked in turn: one that does
 * not own the webhook answers nothing, so a delivery gets the work of the one that does.
 */
export const anyIntegration =
  (...evaluators: IntegrationEvaluator[]): IntegrationEvaluator =>
  async (...delivery) => {
    const work: IntegrationWork[] = [];
    for (const evaluate of evaluators) work.push(await evaluate(...delivery));
    const after = work.flatMap((w) => (w.after ? [w.after] : []));
    return {
      outcomes: work.flatMap((w) => w.outcomes),
      runs: work.flatMap((w) => w.runs),
      ...(after.length > 0 ? { after: async () => void (await Promise.all(after.map((a) => a()))) } : {}),
    };
  };
