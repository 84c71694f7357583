import { z } from 'zod';

/**
 * The demo harness is steered by lines of the form `@demo <verb> [args]` in the prompt or a follow-up, so tests and
 * local users can make a run succeed, fail, sleep, stream messages and tool steps, report artifacts, block, wait for
 * input, list its attachments, or fail during environment setup — deterministically.
 */
export type DemoDirective =
  | { verb: 'message'; text: string }
  | { verb: 'sleep'; ms: number }
  | { verb: 'tool'; name: string; input: unknown; output: unknown }
  | {
      verb: 'artifact';
      artifactType: 'PLAN' | 'PULL_REQUEST' | 'SCREENSHOT' | 'FILE' | 'EXTERNAL_REFERENCE';
      data: Record<string, unknown>;
    }
  | { verb: 'usage'; inputTokens: number; outputTokens: number }
  | { verb: 'fail'; message: string }
  | { verb: 'error'; message: string }
  | { verb: 'block'; message: string }
  | { verb: 'setup-fail'; message: string }
  | { verb: 'await-followup'; timeoutMs: number }
  /** Says which files the run was given under `attachments/`, so a test sees an upload reach the run. */
  | { verb: 'attachments' };

const DIRECTIVE = /^\s*@demo\s+([a-z-]+)(?:\s+(.*))?$/;
const artifactTypes = z.enum(['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE']);

function json(raw: string, what: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw new Error(`@demo ${what}: expected JSON, got ${raw}`);
  }
}

function parseLine(verb: string, args: string): DemoDirective {
  switch (verb) {
    case 'message':
      return { verb, text: args };
    case 'sleep':
      return { verb, ms: Math.min(Number.parseInt(args, 10) || 0, 600_000) };
    case 'tool': {
      // `@demo tool <name> <input-json> [=> <output-json>]`
      const match = /^(\S+)\s*(.*?)(?:\s*=>\s*(.*))?$/.exec(args);
      if (!match) throw new Error('@demo tool: expected a tool name');
      return {
        verb,
        name: match[1]!,
        input: match[2] ? json(match[2], 'tool input') : {},
        output: match[3] ? json(match[3], 'tool output') : { ok: true },
      };
    }
    case 'artifact': {
      const match = /^(\S+)\s*(.*)$/.exec(args);
      const type = artifactTypes.safeParse(match?.[1]);
      if (!match || !type.success) throw new Error(`@demo artifact: unknown type ${match?.[1] ?? ''}`);
      const data = match[2] ? json(match[2], 'artifact data') : {};
      if (!data || typeof data !== 'object' || Array.isArray(data))
        throw new Error('@demo artifact: data must be an object');
      return { verb, artifactType: type.data, data: data as Record<string, unknown> };
    }
    case 'usage': {
      const [input, output] = args.split(/\s+/).map((n) => Number.parseInt(n, 10));
      return { verb, inputTokens: input ?? 0, outputTokens: output ?? 0 };
    }
    case 'fail':
    case 'error':
    case 'block':
    case 'setup-fail':
      return { verb, message: args || `demo ${verb}` };
    case 'attachments':
      return { verb };
    case 'await-followup':
      return { verb, timeoutMs: Math.min(Number.parseInt(args, 10) || 60_000, 600_000) };
    default:
      throw new Error(`@demo: unknown directive ${verb}`);
  }
}

/** Directives in order; text lines that are not directives are ignored. A malformed directive throws. */
export function parseDemoDirectives(text: string): DemoDirective[] {
  const directives: DemoDirective[] = [];
  for (const line of text.split('\n')) {
    const match = DIRECTIVE.exec(line);
    if (match) directives.push(parseLine(match[1]!, (match[2] ?? '').trim()));
  }
  return directives;
}
