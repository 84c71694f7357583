import { createBlobStore, signBlobToken, type BlobStore } from '@conveyor/blob-store';
import { AppError } from '@conveyor/errors';
import { createPrismaClient, newUuid, type Prisma, type PrismaClient } from '@conveyor/db';
import type { Caller__Output, GetConversationRequest__Output } from '@conveyor/proto';
import { createTestDatabase, type TestDatabase } from '@conveyor/testing';
import { readBlob } from '../blobs/read-blob';
import { getConversation } from './get-conversation';
import { getTimeline } from './run-timeline';
import { executionTranscriptKey, getTranscript, type LinkSigner } from './transcript';

// Timeline, conversation, transcript links and ReadBlob over a real PostgreSQL, with RunEvent rows inserted
// as the runner side would record them.

jest.setTimeout(30_000);

let database: TestDatabase;
let db: PrismaClient;
let blobs: BlobStore;
const now = new Date('2026-11-22T12:00:00.000Z');
const signer: LinkSigner = {
  secret: 'integration-test-secret-0123456789',
  baseUrl: 'http://api.test/v1',
  ttlSeconds: 600,
  now: () => now,
};

beforeAll(async () => {
  database = await createTestDatabase();
  db = createPrismaClient(database.url);
  blobs = createBlobStore(db);
});

afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

async function newTeam(): Promise<Caller__Output> {
  const id = `team_${newUuid().slice(0, 8)}`;
  await db.team.create({ data: { id, name: id } });
  return {
    team_id: id,
    principal_type: 'USER',
    principal_id: 'u',
    role: 'ADMIN',
    api_key_id: '',
    run_id: '',
    display_name: '',
    email: '',
  };
}

async function insertRun(caller: Caller__Output, data: Partial<Prisma.RunUncheckedCreateInput> = {}) {
  return db.run.create({
    data: {
      id: newUuid(),
      teamId: caller.team_id,
      title: 't',
      prompt: 'p',
      creatorId: 'u',
      executorId: 'u',
      conversationId: newUuid(),
      sessionId: newUuid(),
      ...data,
    },
  });
}

async function record(runId: string, execution: number, events: Record<string, unknown>[]) {
  for (const event of events) {
    await db.runEvent.create({
      data: { runId, execution, kind: String(event.kind), data: event as Prisma.InputJsonValue },
    });
  }
}

const ref = (r: Partial<GetConversationRequest__Output>): GetConversationRequest__Output => ({
  caller: null,
  run_id: '',
  conversation_id: '',
  ...r,
});

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof AppError)) throw new Error(`expected an AppError, got ${String(err)}`);
  return err;
}

const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe('run inspection', () => {
  let caller: Caller__Output;
  let stranger: Caller__Output;
  let run: Awaited<ReturnType<typeof insertRun>>;
  let continuation: Awaited<ReturnType<typeof insertRun>>;

  beforeAll(async () => {
    caller = await newTeam();
    stranger = await newTeam();
    run = await insertRun(caller, { execution: 2 });
    await record(run.id, 1, [
      { kind: 'state_changed', from: null, to: 'QUEUED' },
      { kind: 'user_message', text: 'Fix the build', source: 'prompt' },
      { kind: 'state_changed', from: 'QUEUED', to: 'CLAIMED' },
      { kind: 'setup_step', step: 'workspace', status: 'started' },
      { kind: 'setup_step', step: 'workspace', status: 'succeeded' },
      { kind: 'state_changed', from: 'CLAIMED', to: 'INPROGRESS' },
      { kind: 'agent_message', text: 'On it.' },
      { kind: 'tool_call', call_id: 'c1', name: 'bash', input: { cmd: 'npm test' } },
      { kind: 'tool_result', call_id: 'c1', output: 'ok' },
      { kind: 'usage', input_tokens: 5 },
      { kind: 'state_changed', from: 'INPROGRESS', to: 'SUCCEEDED' },
    ]);
    await record(run.id, 2, [
      { kind: 'followup_received', followup_id: 'f1', routed_to: 'new_execution' },
      { kind: 'user_message', text: 'Also update the docs', source: 'followup' },
      { kind: 'state_changed', from: 'SUCCEEDED', to: 'QUEUED' },
      { kind: 'agent_message', text: 'Docs updated.' },
    ]);
    // A second run continuing the same conversation.
    continuation = await insertRun(caller, {
      conversationId: run.conversationId,
      createdAt: new Date(Date.now() + 1000),
    });
    await record(continuation.id, 1, [
      { kind: 'user_message', text: 'One more thing', source: 'prompt' },
      { kind: 'agent_message', text: 'Done.' },
    ]);
  });

  it('timeline: lifecycle and setup events of every execution, in order, without conversation content', async () => {
    const timeline = await getTimeline(db, caller, run.id);
    expect(timeline.events?.map((e) => [e.kind, e.execution])).toEqual([
      ['state_changed', 1],
      ['state_changed', 1],
      ['setup_step', 1],
      ['setup_step', 1],
      ['state_changed', 1],
      ['state_changed', 1],
      ['followup_received', 2],
      ['state_changed', 2],
    ]);
    expect(JSON.parse(timeline.events![2]!.data_json!)).toEqual({
      kind: 'setup_step',
      step: 'workspace',
      status: 'started',
    });
    expect(timeline.events![0]!.created_at).toMatch(/Z$/);
  });

  it('conversation by run and by conversation ID: the same messages across executions and runs', async () => {
    const byRun = await getConversation(db, caller, ref({ run_id: run.id }));
    const byId = await getConversation(db, caller, ref({ conversation_id: run.conversationId }));
    expect(byRun).toEqual(byId);
    expect(byRun.conversation_id).toBe(run.conversationId);
    expect(byRun.run_ids).toEqual([run.id, continuation.id]);
    expect(byRun.run_id).toBe(continuation.id);
    expect(
      byRun.messages.map((m) => `${m.role}:${m.execution}:${m.steps.map((s) => s.type).join('+')}`),
    ).toEqual([
      'user:1:text',
      'agent:1:text+tool_call',
      'user:2:text',
      'agent:2:text',
      'user:1:text',
      'agent:1:text',
    ]);
    expect(byRun.messages[1]!.steps[1]).toMatchObject({
      type: 'tool_call',
      call_id: 'c1',
      status: 'completed',
      output: 'ok',
    });
  });

  it('404 alike for unknown, malformed and other teams runs and conversations', async () => {
    const errors = await Promise.all([
      rejection(getTimeline(db, stranger, run.id)),
      rejection(getTimeline(db, caller, newUuid())),
      rejection(getTimeline(db, caller, 'nope')),
      rejection(getConversation(db, stranger, ref({ run_id: run.id }))),
      rejection(getConversation(db, caller, ref({ run_id: 'nope' }))),
      rejection(getConversation(db, stranger, ref({ conversation_id: run.conversationId }))),
      rejection(getConversation(db, caller, ref({ conversation_id: newUuid() }))),
      rejection(getConversation(db, caller, ref({ conversation_id: 'nope' }))),
      rejection(getTranscript(db, blobs, signer, stranger, ref({ run_id: run.id }))),
      rejection(getTranscript(db, blobs, signer, stranger, ref({ conversation_id: run.conversationId }))),
    ]);
    for (const err of errors) expect(err).toMatchObject({ code: 'resource_not_found', httpStatus: 404 });
    expect(errors[0]!.message).toBe(errors[1]!.message);
    expect(errors[5]!.message).toBe(errors[6]!.message);
  });

  it('transcript: 404 before anything is stored, then a signed link to one execution, then to all of them', async () => {
    const fresh = await insertRun(caller);
    const none = await rejection(getTranscript(db, blobs, signer, caller, ref({ run_id: fresh.id })));
    expect(none).toMatchObject({ code: 'resource_not_found', message: 'Transcript not found' });

    await blobs.put(
      executionTranscriptKey(run.id, 1),
      Buffer.from('{"e":1}\n{"e":2}'),
      'application/x-ndjson',
    );
    const one = await getTranscript(db, blobs, signer, caller, ref({ run_id: run.id }));
    expect(one.expires_at).toBe('2026-11-22T12:10:00.000Z');
    expect(one.url).toMatch(/^http:\/\/api\.test\/v1\/blobs\/[\w-]+\.\d+\.[\w-]+$/);
    const first = await readBlob(blobs, signer.secret, tokenOf(one.url!), now);
    expect(Buffer.from(first.data!).toString()).toBe('{"e":1}\n{"e":2}');
    expect(first.content_type).toBe('application/x-ndjson');

    await blobs.put(executionTranscriptKey(run.id, 2), Buffer.from('{"e":3}\n'), 'application/x-ndjson');
    const both = await getTranscript(db, blobs, signer, caller, ref({ run_id: run.id }));
    const combined = await readBlob(blobs, signer.secret, tokenOf(both.url!), now);
    expect(Buffer.from(combined.data!).toString()).toBe('{"e":1}\n{"e":2}\n{"e":3}\n');

    await blobs.put(
      executionTranscriptKey(continuation.id, 1),
      Buffer.from('{"e":4}\n'),
      'application/x-ndjson',
    );
    const conversation = await getTranscript(
      db,
      blobs,
      signer,
      caller,
      ref({ conversation_id: run.conversationId }),
    );
    const whole = await readBlob(blobs, signer.secret, tokenOf(conversation.url!), now);
    expect(Buffer.from(whole.data!).toString()).toBe('{"e":1}\n{"e":2}\n{"e":3}\n{"e":4}\n');
  });

  it('ReadBlob: 403 for tampered or expired links and another secret, 404 once the blob is gone', async () => {
    await blobs.put('scratch/x.txt', Buffer.from('x'), 'text/plain');
    const token = signBlobToken('scratch/x.txt', new Date(now.getTime() + 60_000), signer.secret);
    await expect(readBlob(blobs, signer.secret, token, now)).resolves.toMatchObject({
      content_type: 'text/plain',
    });
    const [k, exp, sig] = token.split('.') as [string, string, string];
    for (const [bad, at, secret] of [
      [`${k}.${Number(exp) + 60}.${sig}`, now, signer.secret],
      [token, new Date(now.getTime() + 61_000), signer.secret],
      [token, now, 'another-secret-0123456789abcdefgh'],
      ['garbage', now, signer.secret],
    ] as const) {
      const err = await rejection(readBlob(blobs, secret, bad, at));
      expect(err).toMatchObject({ code: 'not_authorized', httpStatus: 403 });
    }
    await blobs.delete('scratch/x.txt');
    expect(await rejection(readBlob(blobs, signer.secret, token, now))).toMatchObject({
      code: 'resource_not_found',
      httpStatus: 404,
    });
  });
});
