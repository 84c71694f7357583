import { decideSlack, splitEnvironment } from './slack-trigger';

const app = {
  slackTeamId: 'T1',
  botUserId: 'UBOT',
  allowedChannels: [] as string[],
  allowedUsers: [] as string[],
};

const event = (e: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'event_callback',
  team_id: 'T1',
  event_id: 'Ev1',
  event: { channel: 'C1', user: 'U1', ts: '100.1', ...e },
  ...extra,
});
const mention = (text: string, e: Record<string, unknown> = {}) => event({ type: 'app_mention', text, ...e });
const command = (text: string, extra: Record<string, unknown> = {}) => ({
  command: '/conveyor',
  text,
  team_id: 'T1',
  user_id: 'U1',
  channel_id: 'C1',
  ...extra,
});

describe('decideSlack', () => {
  it('a mention starts a run in a thread under it, without the mention in the prompt', () => {
    expect(decideSlack(app, mention('<@UBOT> fix the build'))).toEqual({
      kind: 'start',
      requester: { user: 'U1', channel: 'C1', threadTs: '100.1' },
      prompt: 'fix the build',
    });
  });

  it('the slash command starts a run; its thread is opened by the first post', () => {
    expect(decideSlack(app, command('fix the build'))).toEqual({
      kind: 'start',
      requester: { user: 'U1', channel: 'C1' },
      prompt: 'fix the build',
    });
  });

  it('env:<name> names the environment and leaves the prompt', () => {
    expect(decideSlack(app, command('fix env:backend the build'))).toMatchObject({
      prompt: 'fix the build',
      environmentName: 'backend',
    });
    expect(splitEnvironment('env:web')).toEqual({ prompt: '', environmentName: 'web' });
    expect(splitEnvironment('see myenv:web')).toEqual({ prompt: 'see myenv:web' });
  });

  it('a reply in a thread may be a follow-up; a mention in a thread may also start one there', () => {
    expect(
      decideSlack(app, event({ type: 'message', text: 'louder', thread_ts: '100.1', ts: '100.2' })),
    ).toEqual({
      kind: 'thread',
      requester: { user: 'U1', channel: 'C1', threadTs: '100.1' },
      message: 'louder',
      startOtherwise: false,
    });
    expect(decideSlack(app, mention('<@UBOT> again', { thread_ts: '99.0' }))).toMatchObject({
      kind: 'thread',
      requester: { threadTs: '99.0' },
      startOtherwise: true,
    });
  });

  it("the app's own messages, other bots', edits and channel messages start nothing", () => {
    const kinds = [
      event({ type: 'message', text: 'Queued', thread_ts: '100.1', ts: '100.3', user: 'UBOT' }),
      event({ type: 'message', text: 'hi', thread_ts: '100.1', ts: '100.3', bot_id: 'B1' }),
      event({ type: 'message', subtype: 'message_changed', thread_ts: '100.1', ts: '100.3' }),
      event({ type: 'message', text: 'hello channel' }),
      // Arrives as app_mention too, which handles it.
      event({ type: 'message', text: '<@UBOT> x', thread_ts: '100.1', ts: '100.4' }),
      event({ type: 'reaction_added' }),
      mention('<@UBOT>   '),
      command(''),
    ].map((p) => decideSlack(app, p).kind);
    expect(kinds).toEqual(Array(8).fill('ignore'));
  });

  it('another workspace, a channel or a user not allowed start nothing', () => {
    expect(decideSlack(app, { ...mention('<@UBOT> hi'), team_id: 'T2' })).toMatchObject({ kind: 'ignore' });
    const limited = { ...app, allowedChannels: ['C9'], allowedUsers: [] };
    expect(decideSlack(limited, mention('<@UBOT> hi'))).toEqual({
      kind: 'ignore',
      reason: "channel C1 is not one of the app's allowed_channels",
    });
    expect(decideSlack(limited, command('hi'))).toMatchObject({ kind: 'ignore' });
    expect(
      decideSlack(limited, event({ type: 'message', text: 'x', thread_ts: '100.1', ts: '100.2' })),
    ).toMatchObject({ kind: 'ignore' });
    expect(decideSlack({ ...app, allowedUsers: ['U2'] }, mention('<@UBOT> hi'))).toEqual({
      kind: 'ignore',
      reason: "user U1 is not one of the app's allowed_users",
    });
    expect(decideSlack({ ...app, allowedChannels: ['C1'] }, mention('<@UBOT> hi')).kind).toBe('start');
  });
});
