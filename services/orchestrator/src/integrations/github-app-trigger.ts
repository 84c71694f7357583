/** What a GitHub App's delivery asks for (docs/integrations.md "What starts a run"), decided from the body alone. */
export interface GitHubAppRules {
  slug: string;
  botLogin: string;
  triggerLabel: string | null;
  /** `owner/repo`; empty: every repository of the App's installations. */
  repositories: string[];
  /** GitHub logins; empty: the repository's owners, members and collaborators. */
  allowedUsers: string[];
}

/** Who asked and where: recorded on the run (its metadata) and used to answer there. */
export interface GitHubRequester {
  sender: string;
  repository: string;
  installationId: number;
  /** The issue or pull request number. */
  number: number;
  url: string;
}

export type GitHubAppDecision =
  | { kind: 'start'; why: 'assigned' | 'labeled' | 'mentioned'; request: string; requester: GitHubRequester }
  | {
      kind: 'followup';
      runId: string;
      message: string;
      requester: GitHubRequester;
      commentId: number;
      /** The pull request's head commit, where the follow-up's check starts. */
      headSha: string;
    }
  | { kind: 'ignore'; reason: string };

/** The branch every run pushes (runner/push-run-branch.ts): a review on a pull request from one is about that run. */
const RUN_BRANCH = /^conveyor\/run-([0-9a-f-]{36})$/;
/** GitHub's `author_association` values of people with a standing in the repository. */
const TRUSTED_ASSOCIATIONS = new Set(['OWNER', 'MEMBER', 'COLLABORATOR']);

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

const ignore = (reason: string): GitHubAppDecision => ({ kind: 'ignore', reason });

export function decideGitHubApp(rules: GitHubAppRules, payload: unknown): GitHubAppDecision {
  const body = obj(payload);
  const action = str(body.action);
  const repository = str(obj(body.repository).full_name);
  const sender = str(obj(body.sender).login);
  const installationId = obj(body.installation).id;
  if (!repository || !sender || typeof installationId !== 'number')
    return ignore('not an event of an App installation');
  // The App's own comments and pushes mention it too: never answer itself.
  if (sender.toLowerCase() === rules.botLogin.toLowerCase()) return ignore('sent by the App itself');
  if (
    rules.repositories.length > 0 &&
    !rules.repositories.some((r) => r.toLowerCase() === repository.toLowerCase())
  )
    return ignore(`repository ${repository} is not one the App acts on`);

  const issue = obj(body.issue);
  const pull = obj(body.pull_request);
  const comment = obj(body.comment);
  const review = obj(body.review);
  const item = Object.keys(pull).length > 0 ? pull : issue;
  const number = item.number;
  if (typeof number !== 'number') return ignore('no issue or pull request');
  const requester: GitHubRequester = {
    sender,
    repository,
    installationId,
    number,
    url: str(item.html_url),
  };
  const association = str(comment.author_association || review.author_association);
  const allowed =
    rules.allowedUsers.length > 0
      ? rules.allowedUsers.some((u) => u.toLowerCase() === sender.toLowerCase())
      : // Assigning and labelling already need triage access; comments and reviews anyone may write.
        association === '' || TRUSTED_ASSOCIATIONS.has(association);
  if (!allowed) return ignore(`${sender} may not trigger the App`);
  const request = [str(issue.title || pull.title), str(issue.body || pull.body)].filter(Boolean).join('\n\n');

  // A review or review comment on a pull request of one of the platform's runs: that run goes on.
  const runBranch = RUN_BRANCH.exec(str(obj(pull.head).ref));
  if (runBranch && (Object.keys(comment).length > 0 || Object.keys(review).length > 0)) {
    const reviewing =
      (action === 'created' && Object.keys(comment).length > 0) ||
      (action === 'submitted' && Object.keys(review).length > 0);
    const text = str(comment.body || review.body).trim();
    if (!reviewing || !text) return ignore('not a new review or review comment with text');
    // A review comment is answered in its thread; a review (no thread to reply in) on the pull request.
    const commentId = Object.keys(comment).length > 0 ? Number(comment.id) : 0;
    const headSha = str(obj(pull.head).sha);
    return { kind: 'followup', runId: runBranch[1]!, message: text, requester, commentId, headSha };
  }
  if (action === 'assigned' && str(obj(body.assignee).login).toLowerCase() === rules.botLogin.toLowerCase())
    return { kind: 'start', why: 'assigned', request, requester };
  if (action === 'labeled' && rules.triggerLabel !== null && str(obj(body.label).name) === rules.triggerLabel)
    return { kind: 'start', why: 'labeled', request, requester };
  if (action === 'created' && mentions(str(comment.body), rules.slug))
    return {
      kind: 'start',
      why: 'mentioned',
      request: `${request}\n\nComment by ${sender}:\n${str(comment.body)}`,
      requester,
    };
  return ignore('not an assignment to the App, its label or a mention of it');
}

/** `@slug` as a whole word (GitHub logins are letters, digits and hyphens). */
function mentions(text: string, slug: string): boolean {
  const escaped = slug.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^A-Za-z0-9-])@${escaped}(\\[bot\\])?(?![A-Za-z0-9-])`, 'i').test(text);
}
