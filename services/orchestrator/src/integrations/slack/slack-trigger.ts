import type { SlackApp } from '@conveyor/db';

/** Who asked and where: the Slack user, the channel, and the thread (absent for a slash command until we post). */
export interface SlackRequester {
  user: string;
  channel: string;
  threadTs?: string;
}

export type SlackDecision =
  | { kind: 'ignore'; reason: string }
  /** A new request: a mention outside a thread the platform answers in, or the slash command. */
  | { kind: 'start'; requester: SlackRequester; prompt: string; environmentName?: string }
  /**
   * A message in a thread: a follow-up when the thread is one of the app's runs (the caller looks it up). A mention in
   * a thread that is not one starts a run there instead (`startOtherwise`).
   */
  | {
      kind: 'thread';
      requester: SlackRequester & { threadTs: string };
      message: string;
      startOtherwise: boolean;
      environmentName?: string;
    };

type SlackEvent = {
  type?: unknown;
  subtype?: unknown;
  user?: unknown;
  bot_id?: unknown;
  text?: unknown;
  ts?: unknown;
  thread_ts?: unknown;
  channel?: unknown;
};

type Payload = {
  type?: unknown;
  team_id?: unknown;
  event?: SlackEvent;
  // Slash commands (their form body as the ingress passes it on: each field a string).
  command?: unknown;
  text?: unknown;
  user_id?: unknown;
  channel_id?: unknown;
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** `env:<name>` anywhere in the text names the environment; it is taken out of the prompt. */
const ENVIRONMENT = /(^|\s)env:([A-Za-z0-9][A-Za-z0-9_.-]{0,99})(?=\s|$)/;

export function splitEnvironment(text: string): { prompt: string; environmentName?: string } {
  const match = ENVIRONMENT.exec(text);
  if (!match) return { prompt: text.trim() };
  const prompt = `${text.slice(0, match.index)}${match[1]}${text.slice(match.index + match[0].length)}`;
  return { prompt: prompt.replace(/\s+/g, ' ').trim(), environmentName: match[2]! };
}

type AppView = Pick<SlackApp, 'slackTeamId' | 'botUserId' | 'allowedChannels' | 'allowedUsers'>;

/** Who may ask where: the app's allowed channels and users (empty: any). */
function refusal(app: AppView, requester: SlackRequester): string | undefined {
  if (app.allowedChannels.length > 0 && !app.allowedChannels.includes(requester.channel))
    return `channel ${requester.channel} is not one of the app's allowed_channels`;
  if (app.allowedUsers.length > 0 && !app.allowedUsers.includes(requester.user))
    return `user ${requester.user} is not one of the app's allowed_users`;
  return undefined;
}

/**
 * What a signed Slack delivery asks for, from its body alone (docs/integrations.md "What starts a run"): the slash
 * command and a mention of the app's bot start a run; a message in a thread may be a follow-up; the bot's own
 * messages, other bots', edits and everything else start nothing (the app answering in its thread must never start
 * itself again).
 */
export function decideSlack(app: AppView, payload: unknown): SlackDecision {
  const p = (payload ?? {}) as Payload;
  const ignore = (reason: string): SlackDecision => ({ kind: 'ignore', reason });
  if (str(p.team_id) !== app.slackTeamId) return ignore("not the app's Slack workspace");

  if (str(p.command) !== undefined) {
    const requester = { user: str(p.user_id) ?? '', channel: str(p.channel_id) ?? '' };
    if (!requester.user || !requester.channel) return ignore('a slash command without its user or channel');
    const refused = refusal(app, requester);
    if (refused) return ignore(refused);
    const { prompt, environmentName } = splitEnvironment(str(p.text) ?? '');
    if (!prompt) return ignore('a slash command without a prompt');
    return { kind: 'start', requester, prompt, ...(environmentName ? { environmentName } : {}) };
  }

  if (p.type !== 'event_callback' || typeof p.event !== 'object' || p.event === null)
    return ignore('not an Events API event');
  const event = p.event;
  const user = str(event.user);
  const channel = str(event.channel);
  const ts = str(event.ts);
  if (event.bot_id !== undefined || user === app.botUserId) return ignore("a bot's message");
  if (event.subtype !== undefined) return ignore(`a message of subtype ${String(event.subtype)}`);
  if (!user || !channel || !ts) return ignore('an event without its user, channel or ts');
  const text = str(event.text) ?? '';
  const mention = `<@${app.botUserId}>`;
  const threadTs = str(event.thread_ts);
  const refused = refusal(app, { user, channel });

  if (event.type === 'app_mention') {
    if (refused) return ignore(refused);
    const { prompt, environmentName } = splitEnvironment(text.split(mention).join(' '));
    if (!prompt) return ignore('a mention without a prompt');
    const env = environmentName ? { environmentName } : {};
    // A mention answers in the thread it was made in, or starts one under itself.
    if (threadTs)
      return {
        kind: 'thread',
        requester: { user, channel, threadTs },
        message: prompt,
        startOtherwise: true,
        ...env,
      };
    return { kind: 'start', requester: { user, channel, threadTs: ts }, prompt, ...env };
  }
  if (event.type === 'message') {
    if (!threadTs || threadTs === ts) return ignore('a message outside a thread');
    // The same message also arrives as app_mention, which handles it.
    if (text.includes(mention)) return ignore('a mention (handled as app_mention)');
    if (refused) return ignore(refused);
    if (!text.trim()) return ignore('an empty message');
    return {
      kind: 'thread',
      requester: { user, channel, threadTs },
      message: text.trim(),
      startOtherwise: false,
    };
  }
  return ignore(`event ${String(event.type)} starts nothing`);
}
