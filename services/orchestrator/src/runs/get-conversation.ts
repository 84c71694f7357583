import { notFound } from '@conveyor/errors';
import type { PrismaClient, Run } from '@conveyor/db';
import type { Caller } from '../auth/caller';
import { isUuid } from './run-access';
import { type Conversation, normalizeConversation } from './normalize-conversation';

/** A run (and so its conversation), or a conversation by ID when `run_id` is empty. */
export interface ConversationRef {
  run_id: string;
  conversation_id: string;
}

/** Every run of the caller's team in a conversation, oldest first; 404 alike for missing and foreign ones. */
export async function conversationRuns(
  db: PrismaClient,
  caller: Caller,
  request: ConversationRef,
): Promise<{ conversationId: string; runs: Run[] }> {
  if (request.run_id) {
    const run = isUuid(request.run_id)
      ? await db.run.findFirst({ where: { id: request.run_id, teamId: caller.team_id } })
      : null;
    if (!run) throw notFound('Run');
    const runs = await db.run.findMany({
      where: { conversationId: run.conversationId, teamId: caller.team_id },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
    return { conversationId: run.conversationId, runs };
  }
  const conversationId = request.conversation_id;
  const runs = isUuid(conversationId)
    ? await db.run.findMany({
        where: { conversationId, teamId: caller.team_id },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      })
    : [];
  if (runs.length === 0) throw notFound('Conversation');
  return { conversationId, runs };
}

const CONVERSATION_KINDS = ['user_message', 'agent_message', 'tool_call', 'tool_result', 'artifact', 'log'];

export async function getConversation(
  db: PrismaClient,
  caller: Caller,
  request: ConversationRef,
): Promise<Conversation> {
  const { conversationId, runs } = await conversationRuns(db, caller, request);
  const runIds = runs.map((r) => r.id);
  const events = await db.runEvent.findMany({
    where: { runId: { in: runIds }, kind: { in: CONVERSATION_KINDS } },
    orderBy: { id: 'asc' },
  });
  return normalizeConversation(conversationId, runIds, events);
}
