import type { PrismaClient, Run } from '@conveyor/db';
import { isUuid } from './run-access';
import { isTerminal } from './run-state-machine';
import { sharedPublicly } from './session-sharing';

/** A redirect check: by session or by conversation, for an anonymous caller (null) or a team's. */
export interface RedirectQuery {
  caller: { team_id: string } | null;
  session_id: string;
  conversation_id: string;
}

/** Where to go instead; both empty when no redirect is needed. */
export interface Redirect {
  conversation_id: string;
  session_id: string;
}

const NO_REDIRECT: Redirect = { conversation_id: '', session_id: '' };
const CONVERSATION_KINDS = ['user_message', 'agent_message', 'tool_call', 'tool_result'];

/** A run the (possibly anonymous) caller may learn about: its own team's, or one whose session is shared publicly. */
function visible(run: Run, teamId: string | undefined): boolean {
  return (Boolean(teamId) && run.teamId === teamId) || sharedPublicly(run.config);
}

/**
 * The public redirect checks (contract §8, docs/api-surface.md). Without credentials they answer only for publicly
 * shared sessions; a malformed, unknown or invisible ID answers exactly like "no redirect needed" (`{}`), so the
 * endpoint reveals nothing about runs the caller could not open anyway.
 */
export async function checkRedirect(db: PrismaClient, req: RedirectQuery): Promise<Redirect> {
  const teamId = req.caller?.team_id || undefined;
  if (req.session_id) {
    if (!isUuid(req.session_id)) return NO_REDIRECT;
    const run = await db.run.findFirst({ where: { sessionId: req.session_id } });
    if (!run || !visible(run, teamId) || !isTerminal(run.state)) return NO_REDIRECT;
    const hasData = await db.runEvent.findFirst({
      where: { runId: run.id, kind: { in: CONVERSATION_KINDS } },
      select: { id: true },
    });
    return hasData ? { ...NO_REDIRECT, conversation_id: run.conversationId } : NO_REDIRECT;
  }
  if (req.conversation_id) {
    if (!isUuid(req.conversation_id)) return NO_REDIRECT;
    const run = await db.run.findFirst({
      where: { conversationId: req.conversation_id },
      orderBy: { createdAt: 'desc' },
    });
    if (!run || !visible(run, teamId)) return NO_REDIRECT;
    const live = run.state === 'INPROGRESS' || run.state === 'CLAIMED';
    return live ? { ...NO_REDIRECT, session_id: run.sessionId } : NO_REDIRECT;
  }
  return NO_REDIRECT;
}
