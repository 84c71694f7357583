import path from 'node:path';
import type { RunEvent } from '@conveyor/run-events';
import type { CliName } from '@conveyor/harnesses';
import type { CliSetup } from './cli-profile';

const MAX_KEPT_CHARS = 100_000;

/**
 * An event the mapping has no run-event kind for: kept on the run's event log as a debug log line holding the CLI's
 * own JSON (the conversation leaves debug logs out; the raw session file has it in full).
 */
export function keptEvent(cli: CliName, event: Record<string, unknown>): RunEvent {
  const json = JSON.stringify(event);
  return {
    kind: 'log',
    level: 'debug',
    text: `${cli} ${String(event.type ?? 'event')}: ${json.length > MAX_KEPT_CHARS ? `${json.slice(0, MAX_KEPT_CHARS)}…` : json}`,
  };
}

/** Tool output as text: a string as is, content blocks joined by their text, anything else as JSON. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((c: { type?: string; text?: unknown }) =>
        c?.type === 'text' ? String(c.text ?? '') : JSON.stringify(c),
      )
      .join('\n');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/** `<skills dir>/<name>/SKILL.md` with the frontmatter every CLI's skill discovery reads. */
export function skillFile(
  skillsDir: string,
  skill: NonNullable<CliSetup['skill']>,
): { path: string; content: string } {
  const frontmatter = [
    '---',
    `name: ${skill.name}`,
    `description: ${JSON.stringify(skill.description)}`,
    '---',
    '',
  ].join('\n');
  return {
    path: path.posix.join(skillsDir, skill.name, 'SKILL.md'),
    content: `${frontmatter}\n${skill.instructions.trim()}\n`,
  };
}
