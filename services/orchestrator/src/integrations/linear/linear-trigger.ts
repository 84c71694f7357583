/** What a Linear integration's delivery asks for (docs/integrations.md "Linear"), decided from the signed body alone. */
export interface LinearRules {
  /** The Linear user an assignment to starts a run (and whose own changes start nothing). */
  agentUserId: string;
  agentName: string;
  triggerLabel: string | null;
}

/** Who asked and where: recorded on the run (its metadata) and where its reports go. */
export interface LinearRequester {
  /** Who changed the issue (Linear's `actor`). */
  actor: string;
  issueId: string;
  /** `ENG-123`. */
  identifier: string;
  url: string;
  /** The Linear team's ID and key, for its repository. */
  teamId: string;
  teamKey: string;
}

export type LinearDecision =
  | {
      kind: 'start';
      why: 'assigned' | 'labeled';
      title: string;
      description: string;
      requester: LinearRequester;
    }
  | { kind: 'followup'; issueId: string; message: string; actor: string }
  | { kind: 'ignore'; reason: string };

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const ignore = (reason: string): LinearDecision => ({ kind: 'ignore', reason });

export function decideLinear(rules: LinearRules, payload: unknown): LinearDecision {
  const body = obj(payload);
  // Linear puts its send time in every delivery; the ingress refuses one older than 60 s when present, and an
  // integration's delivery must carry it, so a signed body cannot be held back and sent later without it.
  if (typeof body.webhookTimestamp !== 'number') return ignore('no webhookTimestamp');
  const action = str(body.action);
  const data = obj(body.data);
  const actor = obj(body.actor);
  const actorName = str(actor.name) || str(actor.id);
  // The integration's own comments and state moves come back as deliveries: never answer itself.
  if (str(actor.id) === rules.agentUserId) return ignore("sent by the agent's own user");
  if (body.type === 'Comment' && action === 'create')
    return mentions(str(data.body), rules)
      ? { kind: 'followup', issueId: str(data.issueId), message: str(data.body), actor: actorName }
      : ignore('a comment not mentioning the agent');
  if (body.type !== 'Issue' || (action !== 'create' && action !== 'update'))
    return ignore('not an issue created or updated');
  const issueId = str(data.id);
  if (!issueId) return ignore('no issue');
  const before = obj(body.updatedFrom);
  const team = obj(data.team);
  const start = (why: 'assigned' | 'labeled'): LinearDecision => ({
    kind: 'start',
    why,
    title: str(data.title),
    description: str(data.description),
    requester: {
      actor: actorName,
      issueId,
      identifier: str(data.identifier),
      url: str(data.url) || str(body.url),
      teamId: str(data.teamId) || str(team.id),
      teamKey: str(team.key),
    },
  });
  // Assigned to the agent now, and not before (an update that changed something else of its issue starts nothing).
  const assignedNow = data.assigneeId === rules.agentUserId;
  const assignedBefore =
    action === 'update' && (!Object.hasOwn(before, 'assigneeId') || before.assigneeId === rules.agentUserId);
  if (assignedNow && !assignedBefore) return start('assigned');
  if (rules.triggerLabel !== null) {
    const label = (Array.isArray(data.labels) ? data.labels : [])
      .map(obj)
      .find((l) => str(l.name).toLowerCase() === rules.triggerLabel!.toLowerCase());
    const labelledBefore =
      action === 'update' &&
      (!Array.isArray(before.labelIds) || (label !== undefined && before.labelIds.includes(label.id)));
    if (label && !labelledBefore) return start('labeled');
  }
  return ignore("not an assignment to the agent's user or its label");
}

/** `@name` of the agent's user as a whole word (Linear writes a mention as the user's display name). */
function mentions(text: string, rules: LinearRules): boolean {
  if (!rules.agentName) return false;
  const escaped = rules.agentName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w@])@${escaped}(?![\\w-])`, 'i').test(text);
}
