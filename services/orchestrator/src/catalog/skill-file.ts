import { parseDocument } from 'yaml';

export type ParsedSkillFile =
  | { ok: true; name: string; description: string; instructions: string }
  | { ok: false; name: string; error: string };

const OPEN = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*$/m;

/** `a/b/deploy/SKILL.md` → `deploy`; a SKILL.md at the root is named after the repository. */
export function skillDirectoryName(path: string, repo: string): string {
  const parts = path.split('/').filter(Boolean);
  return parts.length >= 2 ? parts[parts.length - 2]! : repo;
}

/**
 * A SKILL.md is YAML front matter (between `---` lines) with a non-empty `description` and an optional `name`
 * (the directory name otherwise), followed by the instructions. Anything else is a malformed skill with a reason.
 */
export function parseSkillFile(text: string, fallbackName: string): ParsedSkillFile {
  const fail = (error: string): ParsedSkillFile => ({ ok: false, name: fallbackName, error });
  const open = OPEN.exec(text);
  if (!open) return fail('SKILL.md must start with YAML front matter between --- lines');
  const rest = text.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return fail('the front matter is not closed by a --- line');
  const doc = parseDocument(rest.slice(0, close.index), { prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0)
    return fail(`invalid YAML front matter: ${doc.errors[0]!.message.split('\n')[0]}`);
  const data: unknown = doc.toJS();
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return fail('the front matter must be a YAML mapping');
  const fields = data as Record<string, unknown>;
  if (fields.name !== undefined && (typeof fields.name !== 'string' || !fields.name.trim()))
    return fail('name must be a non-empty string');
  const name = typeof fields.name === 'string' ? fields.name.trim() : fallbackName;
  if (typeof fields.description !== 'string' || !fields.description.trim())
    return { ok: false, name, error: 'description is required (a non-empty string)' };
  const instructions = rest
    .slice(close.index + close[0].length)
    .replace(/^\r?\n/, '')
    .trim();
  return { ok: true, name, description: fields.description.trim(), instructions };
}
