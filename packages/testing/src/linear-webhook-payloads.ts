/** One of Linear's webhook payloads, as sent: the JSON object before it is signed. */
export type LinearWebhookPayload = Record<string, unknown> & { webhookTimestamp: number };

/**
 * Linear's Issue webhook for an issue just assigned to `assigneeId` (the payload as Linear documents it), the
 * delivery that starts an agent run. `number` names the issue `ENG-<number>`; `at` is when Linear sent it.
 */
export function linearIssueAssigned(issue: {
  issueId: string;
  number: number;
  title: string;
  assigneeId: string;
  webhookId: string;
  at: number;
}): LinearWebhookPayload {
  const identifier = `ENG-${issue.number}`;
  const url = `https://linear.test/acme/issue/${identifier}`;
  return {
    action: 'update',
    type: 'Issue',
    createdAt: new Date(issue.at).toISOString(),
    actor: { id: 'user-alice', name: 'Alice', type: 'user' },
    data: {
      id: issue.issueId,
      identifier,
      title: issue.title,
      description: 'Say hello.',
      url,
      assigneeId: issue.assigneeId,
      teamId: 'team-eng',
      team: { id: 'team-eng', key: 'ENG' },
      labels: [],
    },
    updatedFrom: { assigneeId: null, updatedAt: new Date(issue.at - 1000).toISOString() },
    url,
    webhookTimestamp: issue.at,
    webhookId: issue.webhookId,
  };
}
