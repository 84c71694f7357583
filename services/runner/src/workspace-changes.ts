import type { RunSandbox } from './sandbox/run-sandbox';

/** The artifact service takes FILE contents up to 5 MiB (docs/artifacts.md). */
export const MAX_PATCH_BYTES = 5 * 1024 * 1024;

/** Shell: the commit a repository's work is measured from, `$dir`'s upstream branch, else its HEAD. */
export const BASE_COMMIT = `git -C "$dir" rev-parse -q --verify '@{upstream}' 2>/dev/null || git -C "$dir" rev-parse -q --verify HEAD 2>/dev/null`;

/**
 * Prints one patch of every repository's changes since its upstream branch (or HEAD when it has none): committed,
 * staged, unstaged and untracked files alike, paths prefixed with the repository's directory. A scratch index keeps
 * the repository's own index untouched. It runs inside the sandbox: the workspace is the agent's, and git executes
 * its hooks and configuration (core.fsmonitor and the like), which must never run on the platform's side.
 */
const PATCH_SCRIPT = `
for dir in "$@"; do
  [ -e "$dir/.git" ] || continue
  base="$(${BASE_COMMIT})" || continue
  index="$(mktemp)"
  GIT_INDEX_FILE="$index" git -C "$dir" read-tree "$base" &&
    GIT_INDEX_FILE="$index" git -C "$dir" add -A &&
    GIT_INDEX_FILE="$index" git -C "$dir" diff --cached --binary --src-prefix="a/$dir/" --dst-prefix="b/$dir/" "$base"
  status=$?
  rm -f "$index"
  [ "$status" = 0 ] || exit "$status"
done
`;

export type WorkspacePatch = { patch: Buffer; files: number } | { tooLarge: true; bytes: number };

/** The changes the run made to its environment's repositories (`dirs`, relative to the workspace). */
export async function collectWorkspacePatch(
  sandbox: RunSandbox,
  env: Record<string, string>,
  dirs: string[],
): Promise<WorkspacePatch> {
  const proc = sandbox.exec({
    argv: ['/bin/sh', '-c', PATCH_SCRIPT, 'workspace-patch', ...dirs],
    env,
    network: false,
  });
  const chunks: Buffer[] = [];
  let bytes = 0;
  let errors = '';
  proc.stdout.on('data', (d: Buffer) => {
    bytes += d.length;
    if (bytes <= MAX_PATCH_BYTES) chunks.push(d);
  });
  proc.stderr.on('data', (d: Buffer) => (errors = (errors + d.toString()).slice(-2000)));
  const exit = await proc.exited;
  if (exit.code !== 0)
    throw new Error(`git diff failed in the sandbox: ${errors.trim() || `exit ${exit.code ?? exit.signal}`}`);
  if (bytes > MAX_PATCH_BYTES) return { tooLarge: true, bytes };
  const patch = Buffer.concat(chunks);
  return { patch, files: patch.toString('utf8').match(/^diff --git /gm)?.length ?? 0 };
}
