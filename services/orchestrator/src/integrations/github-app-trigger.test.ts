import { decideGitHubApp, type GitHubAppRules } from './github-app-trigger';

const rules: GitHubAppRules = {
  slug: 'conveyor',
  botLogin: 'conveyor[bot]',
  triggerLabel: 'agent',
  repositories: [],
  allowedUsers: [],
};
const RUN = '6d6e06e7-ffb7-40bf-a36a-27f8208ce4a4';
const base = {
  repository: { full_name: 'acme/widgets' },
  installation: { id: 7 },
  sender: { login: 'octocat' },
  issue: { number: 3, title: 'Fix it', body: 'Please.' },
};
const review = (association: string, extra: object = {}) => ({
  ...base,
  issue: undefined,
  action: 'created',
  comment: { id: 9, body: 'Rename this too.', author_association: association },
  pull_request: { number: 4, head: { ref: `conveyor/run-${RUN}`, sha: 'abc' } },
  ...extra,
});

describe('decideGitHubApp', () => {
  it('starts a run for an assignment to the bot, the label and a mention by a member', () => {
    expect(
      decideGitHubApp(rules, { ...base, action: 'assigned', assignee: { login: 'conveyor[bot]' } }),
    ).toMatchObject({
      kind: 'start',
      why: 'assigned',
      request: 'Fix it\n\nPlease.',
      requester: { sender: 'octocat', repository: 'acme/widgets', installationId: 7, number: 3 },
    });
    expect(decideGitHubApp(rules, { ...base, action: 'labeled', label: { name: 'agent' } })).toMatchObject({
      kind: 'start',
      why: 'labeled',
    });
    const comment = { id: 1, body: 'hey @conveyor, fix this', author_association: 'MEMBER' };
    expect(decideGitHubApp(rules, { ...base, action: 'created', comment })).toMatchObject({
      kind: 'start',
      why: 'mentioned',
    });
  });

  it('ignores other assignees, labels, look-alike mentions and the bot itself', () => {
    const kinds = [
      { ...base, action: 'assigned', assignee: { login: 'someone' } },
      { ...base, action: 'labeled', label: { name: 'bug' } },
      { ...base, action: 'created', comment: { body: 'ask @conveyor-other', author_association: 'OWNER' } },
      { ...base, action: 'created', comment: { body: 'mail a@conveyor', author_association: 'OWNER' } },
      { ...base, sender: { login: 'conveyor[bot]' }, action: 'created', comment: { body: '@conveyor done' } },
      { ...base, action: 'assigned', assignee: { login: 'conveyor[bot]' }, installation: undefined },
    ].map((p) => decideGitHubApp(rules, p).kind);
    expect(kinds).toEqual(['ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore']);
  });

  it('lets nobody without standing in the repository trigger it by a comment, and only the allow-list when set', () => {
    const stranger = {
      ...base,
      action: 'created',
      comment: { body: '@conveyor go', author_association: 'NONE' },
    };
    expect(decideGitHubApp(rules, stranger)).toMatchObject({
      kind: 'ignore',
      reason: 'octocat may not trigger the App',
    });
    expect(decideGitHubApp(rules, review('CONTRIBUTOR')).kind).toBe('ignore');
    const listed = { ...rules, allowedUsers: ['Octocat'] };
    expect(decideGitHubApp(listed, stranger).kind).toBe('start');
    const assigned = {
      ...base,
      action: 'assigned',
      assignee: { login: 'conveyor[bot]' },
      sender: { login: 'eve' },
    };
    expect(decideGitHubApp(listed, assigned).kind).toBe('ignore');
  });

  it('acts on the configured repositories only', () => {
    const limited = { ...rules, repositories: ['acme/other'] };
    expect(decideGitHubApp(limited, { ...base, action: 'labeled', label: { name: 'agent' } })).toMatchObject({
      kind: 'ignore',
      reason: 'repository acme/widgets is not one the App acts on',
    });
  });

  it("a review comment or review on a run's pull request is a follow-up of that run", () => {
    expect(decideGitHubApp(rules, review('MEMBER'))).toMatchObject({
      kind: 'followup',
      runId: RUN,
      message: 'Rename this too.',
      commentId: 9,
      headSha: 'abc',
    });
    const submitted = review('MEMBER', {
      action: 'submitted',
      comment: undefined,
      review: { id: 5, body: 'Needs tests.', author_association: 'OWNER' },
    });
    expect(decideGitHubApp(rules, submitted)).toMatchObject({ kind: 'followup', commentId: 0 });
    const other = review('MEMBER', { pull_request: { number: 4, head: { ref: 'feature/x' } } });
    expect(decideGitHubApp(rules, other).kind).toBe('ignore');
  });
});
