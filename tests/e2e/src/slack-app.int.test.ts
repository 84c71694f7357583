import { randomUUID } from 'node:crypto';
import { createPrismaClient } from '@conveyor/db';
import {
  createMember,
  otherTeamAdmin,
  startScriptedSlack,
  type ScriptedSlack,
  type SlackMessage,
} from '@conveyor/testing';
import { signWebhook } from '@conveyor/webhook-auth';
import { startPlatform, type RunningPlatform } from './platform';
import { apiCall, eventually, waitForRunState, type Json } from './run-waits';
import { integrationRegistration, webhookApi } from './webhook-helpers';

// A team's Slack app (docs/integrations.md "Slack app") against a scripted Slack Web API that checks the bot token as
// Slack does (`Authorization: Bearer xoxb-…`, `{ok:false, error:'invalid_auth'}` otherwise). Deliveries are signed
// the way Slack signs them (v0 HMAC of timestamp and body). Mention → queued, working and the outcome in the mention's
// thread → a reply in that thread → a follow-up of the same run → its replies in the same thread.
jest.setTimeout(240_000);

const TEAM = 'T0ACME';
const BOT = 'U0CONVEYOR';
const SIGNING_SECRET = `slack-signing-${randomUUID()}`;
const BOT_TOKEN = `xoxb-1234-5678-${randomUUID().replace(/-/g, '')}`;
const TERMINAL = ['SUCCEEDED', 'FAILED', 'ERROR', 'CANCELLED', 'BLOCKED'];

describe('Slack app', () => {
  let platform: RunningPlatform;
  let slack: ScriptedSlack;
  let factoryId: string;
  let ts = 1_800_000_000;
  const nextTs = () => `${ts++}.000200`;

  beforeAll(async () => {
    slack = await startScriptedSlack({ token: BOT_TOKEN, teamId: TEAM, botUserId: BOT });
    platform = await startPlatform({
      env: {
        SLACK_API_URL: slack.url,
        // The suite's apps start 6 runs before the last test, whose second request meets the limit.
        SLACK_APP_RUNS_PER_HOUR: '7',
        EVENT_DISPATCH_INTERVAL_MS: '200',
      },
    });
    factoryId = await webhookApi(platform).factory();
  });
  afterAll(async () => {
    await platform?.stop();
    await slack?.close();
  });

  const register = integrationRegistration(
    () => platform,
    '/integrations/slack-apps',
    () => ({
      factory_id: factoryId,
      signing_secret: SIGNING_SECRET,
      bot_token: BOT_TOKEN,
    }),
  );
  const newApp = async (prefix: string, extra: Json = {}) => {
    const created = await register(prefix, extra);
    expect(created.status).toBe(201);
    return created.body;
  };

  /** POSTs a body to the app's webhook signed as Slack signs (secret, time and headers overridable). */
  const send = (
    app: Json,
    body: string,
    { secret = SIGNING_SECRET, now = new Date(), form = false, headers = {} as Record<string, string> } = {},
  ) =>
    fetch(app.webhook_url as string, {
      method: 'POST',
      body,
      headers: {
        'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
        ...signWebhook('slack', { secret, body, now }),
        ...headers,
      },
    });
  const event = (e: Json): string =>
    JSON.stringify({
      type: 'event_callback',
      team_id: TEAM,
      api_app_id: 'A0CONVEYOR',
      event_id: `Ev${randomUUID().replace(/-/g, '')}`,
      event: { channel: 'C0GENERAL', user: 'U0ALICE', ...e },
    });
  const mention = (text: string, e: Json = {}) =>
    event({ type: 'app_mention', text: `<@${BOT}> ${text}`, ts: nextTs(), ...e });

  /**
   * Mentions the app twice and waits for both deliveries: one starts a run, the other starts nothing. The run, and
   * the detail the API shows for the delivery that started none (why).
   */
  const oneRunOfTwo = async (app: Json, first: string, second: string) => {
    expect((await send(app, mention(first))).status).toBe(200);
    expect((await send(app, mention(second))).status).toBe(200);
    const entries = await webhookApi(platform).waitForDeliveries(
      factoryId,
      app.webhook_uid as string,
      (e) => e.length === 2 && e.every((d) => d.processed_at),
      'both deliveries',
    );
    const runs = entries.flatMap((e) => e.run_ids as string[]);
    expect(runs).toHaveLength(1);
    const none = entries.find((e) => (e.run_ids as string[]).length === 0)!;
    const detail = await apiCall(
      platform,
      'GET',
      `/factories/${factoryId}/webhooks/${String(app.webhook_uid)}/deliveries/${String(none.delivery_id)}`,
    );
    return { runId: runs[0]!, why: JSON.stringify(detail.body) };
  };

  const runsOf = async (app: Json) =>
    (await webhookApi(platform).deliveries(factoryId, app.webhook_uid as string)).flatMap(
      (d) => d.run_ids as string[],
    );
  const inThread = (threadTs: string): SlackMessage[] =>
    slack.messages.filter((m) => m.threadTs === threadTs);
  /** The thread reads queued → working → the outcome (once per execution, in order). */
  const waitForThread = (threadTs: string, count: number) =>
    eventually(
      async () => inThread(threadTs).filter((m) => m.text.startsWith('Conveyor run')).length >= count,
      `${count} outcome(s) in thread ${threadTs}`,
      platform,
      90_000,
    );

  it('registers an app with its bot token checked by auth.test, never shows the secrets, and is invisible to other teams', async () => {
    const app = await newApp('main');
    expect(app).toMatchObject({
      slack_team_id: TEAM,
      bot_user_id: BOT,
      status: 'active',
      broken_reason: null,
    });
    expect(slack.requests.find((r) => r.method === 'auth.test')?.authorization).toBe(`Bearer ${BOT_TOKEN}`);
    const listed = await apiCall(platform, 'GET', '/integrations/slack-apps');
    for (const shown of [app, listed.body]) {
      expect(JSON.stringify(shown)).not.toContain(BOT_TOKEN);
      expect(JSON.stringify(shown)).not.toContain(SIGNING_SECRET);
    }

    // A token Slack refuses: 400 with Slack's reason, nothing stored.
    const refused = await register('wrong', { bot_token: 'xoxb-not-the-token' });
    expect(refused.status).toBe(400);
    expect(refused.body.detail).toBe('Slack refused bot_token: invalid_auth');
    const names = (await apiCall(platform, 'GET', '/integrations/slack-apps')).body.slack_apps as Json[];
    expect(names.map((a) => a.name)).not.toContain(expect.stringMatching(/^wrong-/));

    // Another team's admin: 404 exactly like a missing app; a member of the team: 403.
    const other = await otherTeamAdmin(platform);
    const path = `/integrations/slack-apps/${String(app.slack_app_id)}`;
    const foreign = await apiCall(platform, 'GET', path, undefined, other.key);
    const missing = await apiCall(
      platform,
      'GET',
      '/integrations/slack-apps/sla_missing',
      undefined,
      other.key,
    );
    expect(foreign.status).toBe(404);
    expect(foreign.body.detail).toBe(missing.body.detail);
    expect((await apiCall(platform, 'DELETE', path, undefined, other.key)).status).toBe(404);
    expect((await apiCall(platform, 'GET', '/integrations/slack-apps', undefined, other.key)).body).toEqual({
      slack_apps: [],
    });
    const member = await createMember(platform);
    expect((await apiCall(platform, 'GET', path, undefined, member.key)).status).toBe(403);

    expect((await apiCall(platform, 'DELETE', path)).status).toBe(204);
    expect((await send(app, mention('anyone there?'))).status).toBe(404);
  });

  it('answers the URL verification challenge only when signed', async () => {
    const app = await newApp('verify');
    const body = JSON.stringify({ type: 'url_verification', token: 'legacy', challenge: 'c-123' });
    const answered = await send(app, body);
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ challenge: 'c-123' });
    const unsigned = await send(app, body, { secret: 'not-the-signing-secret-0123' });
    expect(unsigned.status).toBe(401);
    expect(await unsigned.text()).not.toContain('c-123');
  });

  it('mention → queued, working and the outcome in its thread → a reply there → a follow-up of the same run, answered in the thread', async () => {
    const app = await newApp('loop');
    const mentionTs = nextTs();
    // Acknowledged with a 200 at once; the run is queued behind it.
    expect((await send(app, mention('say hello', { ts: mentionTs }))).status).toBe(200);

    let runId = '';
    await eventually(async () => !!(runId = (await runsOf(app))[0] ?? ''), 'the run', platform, 20_000);
    const done = await waitForRunState(platform, runId, TERMINAL, 90_000);
    expect(done.state).toBe('SUCCEEDED');
    expect(done.source).toBe('SLACK');
    // Who asked and where, on the run.
    expect(done.metadata).toMatchObject({
      slack_app_id: app.slack_app_id,
      slack_user: 'U0ALICE',
      slack_channel: 'C0GENERAL',
      slack_thread_ts: mentionTs,
    });
    await waitForThread(mentionTs, 1);
    const first = inThread(mentionTs).map((m) => m.text);
    expect(first[0]).toMatch(/^Queued: \*Slack: say hello\*/);
    expect(first[1]).toBe('Working on it…');
    expect(first[2]).toContain('ended *SUCCEEDED*');
    expect(first[2]).toContain(`/console/runs/${runId}`);
    expect(first).toHaveLength(3);
    // Every call carried the bot token, as Slack requires.
    for (const r of slack.requests.filter((q) => q.method === 'chat.postMessage'))
      expect(r.authorization).toBe(`Bearer ${BOT_TOKEN}`);

    // A reply in the thread: a follow-up of the same run, answered in the same thread.
    expect(
      (await send(app, event({ type: 'message', text: 'now louder', ts: nextTs(), thread_ts: mentionTs })))
        .status,
    ).toBe(200);
    await waitForThread(mentionTs, 2);
    const again = await waitForRunState(platform, runId, TERMINAL, 10_000);
    expect(again.state).toBe('SUCCEEDED');
    const all = inThread(mentionTs).map((m) => m.text);
    expect(all.slice(3)).toEqual([
      expect.stringMatching(/^Follow-up queued/),
      'Working on it…',
      expect.stringContaining('ended *SUCCEEDED*'),
    ]);
    // The app's own message in the thread, as Slack delivers it back, starts nothing.
    expect(
      (
        await send(
          app,
          event({ type: 'message', text: 'Working on it…', ts: nextTs(), thread_ts: mentionTs, user: BOT }),
        )
      ).status,
    ).toBe(200);
    const entries = await webhookApi(platform).waitForDeliveries(
      factoryId,
      app.webhook_uid as string,
      (e) => e.length === 3 && e.every((d) => d.processed_at),
      'the three deliveries',
    );
    // The follow-up is of the same run: no run of its own.
    expect(entries.flatMap((e) => e.run_ids as string[])).toEqual([runId]);

    // The bot token never reached a log, the run or its prompt.
    expect(platform.logs()).not.toContain(BOT_TOKEN);
    const conversation = await apiCall(platform, 'GET', `/agent/runs/${runId}/conversation`);
    expect(JSON.stringify([done, again, conversation.body])).not.toContain(BOT_TOKEN);
  });

  it('/conveyor <prompt> (a form body) is acknowledged to its sender; the first post opens the thread the others follow', async () => {
    const app = await newApp('command');
    const body = new URLSearchParams({
      token: 'legacy-verification-token',
      team_id: TEAM,
      channel_id: 'C0GENERAL',
      user_id: 'U0BOB',
      command: '/conveyor',
      text: 'tidy the README',
      response_url: 'https://hooks.slack.test/commands/1',
      trigger_id: randomUUID(),
    }).toString();
    const ack = await send(app, body, { form: true });
    expect(ack.status).toBe(200);
    expect(await ack.json()).toMatchObject({ response_type: 'ephemeral' });
    let runId = '';
    await eventually(async () => !!(runId = (await runsOf(app))[0] ?? ''), 'the run', platform, 20_000);
    await waitForRunState(platform, runId, TERMINAL, 90_000);
    let opener: SlackMessage | undefined;
    await eventually(
      async () => {
        opener = slack.messages.find((m) => !m.threadTs && m.text.includes('tidy the README'));
        return !!opener && inThread(opener.ts).some((m) => m.text.startsWith('Conveyor run'));
      },
      'the command thread',
      platform,
      60_000,
    );
    expect(opener!.channel).toBe('C0GENERAL');
    expect((await apiCall(platform, 'GET', `/agent/runs/${runId}`)).body.metadata).toMatchObject({
      slack_user: 'U0BOB',
      slack_thread_ts: opener!.ts,
    });
    // The run's copy of the request (its event-payload.json) is what was asked, without Slack's verification token
    // or response URL.
    const db = createPrismaClient(platform.databaseUrl);
    try {
      const files = await db.runAttachment.findMany({ where: { runId } });
      expect(files.map((f) => JSON.parse(Buffer.from(f.data).toString('utf8')) as unknown)).toEqual([
        { user: 'U0BOB', channel: 'C0GENERAL', text: 'tidy the README' },
      ]);
    } finally {
      await db.$disconnect();
    }
  });

  it('wrong signatures, stale timestamps, replays and channels not allowed start nothing; Slack retries are one delivery', async () => {
    const app = await newApp('guard', { allowed_channels: ['C0AGENTS'] });
    const allowed = (text: string) => mention(text, { channel: 'C0AGENTS' });
    expect((await send(app, allowed('wrong secret'), { secret: 'not-the-signing-secret-0123' })).status).toBe(
      401,
    );
    expect((await send(app, allowed('too old'), { now: new Date(Date.now() - 6 * 60_000) })).status).toBe(
      401,
    );
    expect((await send(app, mention('in a channel not allowed'))).status).toBe(200);

    // The same signed request twice (a replay), and a Slack retry of an event (a new signature, the same event_id).
    const body = allowed('only once');
    const now = new Date();
    const headers = { ...signWebhook('slack', { secret: SIGNING_SECRET, body, now }) };
    const post = (extra: Record<string, string> = {}) =>
      fetch(app.webhook_url as string, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', ...headers, ...extra },
      });
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(200);
    expect(
      (
        await send(app, body, {
          headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' },
        })
      ).status,
    ).toBe(200);

    const entries = await webhookApi(platform).waitForDeliveries(
      factoryId,
      app.webhook_uid as string,
      (e) => e.length === 6 && e.every((d) => d.processed_at || d.label !== 'Accepted'),
      'the six deliveries',
    );
    expect(entries.map((e) => e.label).sort()).toEqual([
      'Accepted',
      'Accepted',
      'Duplicate',
      'Duplicate',
      'Rejected (auth)',
      'Rejected (auth)',
    ]);
    const runs = entries.flatMap((e) => e.run_ids as string[]);
    expect(runs).toHaveLength(1);
    const notAllowed = entries.find((e) => e.label === 'Accepted' && (e.run_ids as string[]).length === 0)!;
    const detail = await apiCall(
      platform,
      'GET',
      `/factories/${factoryId}/webhooks/${String(app.webhook_uid)}/deliveries/${String(notAllowed.delivery_id)}`,
    );
    expect(JSON.stringify(detail.body)).toContain(
      "channel C0GENERAL is not one of the app's allowed_channels",
    );
    await waitForRunState(platform, runs[0]!, TERMINAL, 90_000);
  });

  it('a Slack outage only delays the thread replies: they are retried until Slack takes them', async () => {
    const app = await newApp('blip');
    const mentionTs = nextTs();
    slack.unavailable = true;
    try {
      expect((await send(app, mention('through the outage', { ts: mentionTs }))).status).toBe(200);
      let runId = '';
      await eventually(async () => !!(runId = (await runsOf(app))[0] ?? ''), 'the run', platform, 20_000);
      await waitForRunState(platform, runId, TERMINAL, 90_000);
      await eventually(
        async () => slack.requests.filter((r) => r.method === 'chat.postMessage').length > 0,
        'a refused post',
        platform,
        20_000,
      );
      expect(inThread(mentionTs)).toEqual([]);
    } finally {
      slack.unavailable = false;
    }
    await waitForThread(mentionTs, 1);
    expect(inThread(mentionTs).map((m) => m.text.split(':')[0])).toEqual([
      'Queued',
      'Working on it…',
      'Conveyor run *Slack',
    ]);
  });

  it("a revoked bot token marks the app broken with Slack's reason; it then starts nothing and retries nothing", async () => {
    const app = await newApp('revoked');
    slack.revoked = true;
    try {
      expect((await send(app, mention('anything'))).status).toBe(200);
      await eventually(
        async () =>
          (await apiCall(platform, 'GET', `/integrations/slack-apps/${String(app.slack_app_id)}`)).body
            .status === 'broken',
        'the app marked broken',
        platform,
        60_000,
      );
      const shown = await apiCall(platform, 'GET', `/integrations/slack-apps/${String(app.slack_app_id)}`);
      expect(shown.body.broken_reason).toBe('Slack refused the bot token: token_revoked');
      const [runId] = await runsOf(app);
      await waitForRunState(platform, runId!, TERMINAL, 90_000);
      const calls = slack.requests.length;

      expect((await send(app, mention('again'))).status).toBe(200);
      const entries = await webhookApi(platform).waitForDeliveries(
        factoryId,
        app.webhook_uid as string,
        (e) => e.length === 2 && e.every((d) => d.processed_at),
        'the second delivery',
      );
      expect(entries.flatMap((e) => e.run_ids as string[])).toEqual([runId]);
      expect(JSON.stringify(entries)).not.toContain(BOT_TOKEN);
      // Nothing keeps calling Slack with a token that cannot work.
      expect(slack.requests.length).toBe(calls);
    } finally {
      slack.revoked = false;
    }
  });

  it("env:<name> picks one of the team's environments; a member's personal environment of that name is never used", async () => {
    const app = await newApp('envs');
    const name = `slack-env-${randomUUID().slice(0, 8)}`;
    const member = await createMember(platform);
    // A member's personal environment: the name is theirs alone, and the app's runs must never reach it.
    const personal = await apiCall(
      platform,
      'POST',
      '/agent/environments',
      { name: `${name}-private`, team: false },
      member.key,
    );
    expect(personal.status).toBe(201);
    const shared = await apiCall(platform, 'POST', '/agent/environments', { name });
    expect(shared.status).toBe(201);

    const { runId, why } = await oneRunOfTwo(
      app,
      `env:${name}-private read their setup`,
      `env:${name} say hello`,
    );
    expect(why).toMatch(new RegExp(`no team environment named \\\\*"${name}-private\\\\*"`));
    const run = await waitForRunState(platform, runId, TERMINAL, 90_000);
    expect(run.agent_config).toMatchObject({ environment_id: shared.body.uid });
  });

  it("the team's Slack app runs per hour are limited: a request over the limit starts nothing and says why", async () => {
    const app = await newApp('limited');
    const { runId, why } = await oneRunOfTwo(app, 'first', 'second');
    expect(why).toContain('rate_limited: the team');
    await waitForRunState(platform, runId, TERMINAL, 90_000);
  });
});
