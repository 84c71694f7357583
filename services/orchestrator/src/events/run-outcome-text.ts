import { sessionLinkOf } from './event-body';

/**
 * What a run that ended says where it was asked (a GitHub comment, a Slack thread): its outcome, the pull requests it
 * opened and its console link, one line each. `bold` is the place's markup (`**` on GitHub, `*` in Slack).
 */
export function runOutcomeLines(
  run: { id: string; title: string; state: string; statusMessage: string | null },
  pullRequestUrls: readonly string[],
  publicApiBaseUrl: string,
  bold: string,
): string[] {
  return [
    `Conveyor run ${bold}${run.title}${bold} ended ${bold}${run.state}${bold}${run.statusMessage ? `: ${run.statusMessage}` : ''}`,
    ...pullRequestUrls.map((url) => `Pull request: ${url}`),
    `Session: ${sessionLinkOf(publicApiBaseUrl, run.id)}`,
  ];
}
