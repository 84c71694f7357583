import { decideLinear, type LinearRules } from './linear-trigger';

const rules: LinearRules = { agentUserId: 'agent', agentName: 'conveyor', triggerLabel: 'agent' };
const issue = {
  id: 'issue-1',
  identifier: 'ENG-7',
  title: 'Fix it',
  description: 'Please.',
  url: 'https://linear.test/ENG-7',
  teamId: 'team-eng',
  team: { id: 'team-eng', key: 'ENG' },
  assigneeId: null as string | null,
  labels: [] as Array<{ id: string; name: string }>,
};
const delivery = (data: object, updatedFrom: object | undefined, extra: object = {}) => ({
  action: updatedFrom ? 'update' : 'create',
  type: 'Issue',
  actor: { id: 'alice', name: 'Alice' },
  data: { ...issue, ...data },
  ...(updatedFrom ? { updatedFrom } : {}),
  webhookTimestamp: 1_800_000_000_000,
  ...extra,
});
const AGENT_LABEL = { id: 'label-agent', name: 'Agent' };

describe('decideLinear', () => {
  it('starts a run for an issue assigned to the agent now, or given the label now, created or updated', () => {
    expect(decideLinear(rules, delivery({ assigneeId: 'agent' }, { assigneeId: null }))).toEqual({
      kind: 'start',
      why: 'assigned',
      title: 'Fix it',
      description: 'Please.',
      requester: {
        actor: 'Alice',
        issueId: 'issue-1',
        identifier: 'ENG-7',
        url: 'https://linear.test/ENG-7',
        teamId: 'team-eng',
        teamKey: 'ENG',
      },
    });
    expect(decideLinear(rules, delivery({ assigneeId: 'agent' }, undefined))).toMatchObject({
      why: 'assigned',
    });
    expect(decideLinear(rules, delivery({ labels: [AGENT_LABEL] }, { labelIds: [] }))).toMatchObject({
      why: 'labeled',
    });
    expect(decideLinear(rules, delivery({ labels: [AGENT_LABEL] }, undefined))).toMatchObject({
      why: 'labeled',
    });
  });

  it('starts nothing for an issue that was already the agent’s or labelled, another assignee or label, or no label rule', () => {
    const kinds = [
      // Another field of an issue already assigned to the agent changed (e.g. the state the integration moved).
      delivery({ assigneeId: 'agent' }, { stateId: 'todo' }),
      delivery({ assigneeId: 'agent' }, { assigneeId: 'agent' }),
      delivery({ assigneeId: 'bob' }, { assigneeId: null }),
      delivery({ labels: [AGENT_LABEL] }, { labelIds: ['label-agent'] }),
      delivery({ labels: [AGENT_LABEL] }, { title: 'old' }),
      delivery({ labels: [{ id: 'l', name: 'bug' }] }, { labelIds: [] }),
      { ...delivery({ assigneeId: 'agent' }, undefined), action: 'remove' },
      { ...delivery({ assigneeId: 'agent' }, undefined), type: 'Project' },
    ].map((p) => decideLinear(rules, p).kind);
    expect(kinds).toEqual(Array(8).fill('ignore'));
    expect(
      decideLinear({ ...rules, triggerLabel: null }, delivery({ labels: [AGENT_LABEL] }, undefined)).kind,
    ).toBe('ignore');
  });

  it("refuses a delivery without Linear's webhookTimestamp, and the agent's own changes", () => {
    const { webhookTimestamp: _stamp, ...unstamped } = delivery({ assigneeId: 'agent' }, undefined);
    expect(decideLinear(rules, unstamped)).toEqual({ kind: 'ignore', reason: 'no webhookTimestamp' });
    expect(
      decideLinear(
        rules,
        delivery({ assigneeId: 'agent' }, undefined, { actor: { id: 'agent', name: 'conveyor' } }),
      ),
    ).toEqual({ kind: 'ignore', reason: "sent by the agent's own user" });
  });

  it('takes a comment mentioning the agent as a follow-up of its issue, and nothing else', () => {
    const comment = (body: string, actor = { id: 'alice', name: 'Alice' }) => ({
      action: 'create',
      type: 'Comment',
      actor,
      data: { id: 'c1', body, issueId: 'issue-1' },
      webhookTimestamp: 1_800_000_000_000,
    });
    expect(decideLinear(rules, comment('@conveyor please also rename the tests'))).toEqual({
      kind: 'followup',
      issueId: 'issue-1',
      message: '@conveyor please also rename the tests',
      actor: 'Alice',
    });
    const kinds = [
      comment('@conveyorbot do it'),
      comment('mail me at a@conveyor'),
      comment('no mention'),
      comment('@conveyor again', { id: 'agent', name: 'conveyor' }),
    ].map((p) => decideLinear(rules, p).kind);
    expect(kinds).toEqual(['ignore', 'ignore', 'ignore', 'ignore']);
  });
});
