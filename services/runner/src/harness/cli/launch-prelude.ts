/**
 * What must be in place before the CLI starts — the workspace's directories, the profile's HOME files — made by the
 * same exec that starts it, not one exec each: on Kubernetes every exec is a round trip through the API server and the
 * kubelet (~0.1–0.2 s each, bench/README.md), all of it before the agent's first model request.
 *
 * Arguments: directories, `--`, then (path, content) pairs, `--`, then the command. Paths and contents stay arguments,
 * never shell text. Written inside the sandbox as the run's uid, like writeSandboxFile: a path the agent replaced with
 * a link reaches only what the run could reach anyway. A failed write ends the launch with 125 and says why on stderr.
 */
const PRELUDE = `while [ "$1" != -- ]; do mkdir -p -- "$1" || exit 125; shift; done; shift
while [ "$1" != -- ]; do mkdir -p -- "\${1%/*}" && printf %s "$2" >"$1" || exit 125; shift 2; done; shift
exec "$@"`;

/**
 * Above this a file is written by an exec of its own: an argument is bounded (Linux: 128 KiB each), and on Kubernetes
 * the whole argv travels in the exec request's URL.
 */
export const MAX_INLINE_BYTES = 32 * 1024;

export interface LaunchPrelude {
  dirs: string[];
  files: Array<{ path: string; content: string }>;
}

/** Whether `content` can travel as an argument (no NUL, within the bound). */
export const inlinable = (content: string | Buffer): content is string =>
  typeof content === 'string' && !content.includes('\0') && Buffer.byteLength(content) <= MAX_INLINE_BYTES;

/** `command` started after the prelude's directories and files, in the one process. */
export function withPrelude(prelude: LaunchPrelude, command: string[]): [string, ...string[]] {
  return [
    '/bin/sh',
    '-c',
    PRELUDE,
    'conveyor-launch',
    ...prelude.dirs,
    '--',
    ...prelude.files.flatMap((f) => [f.path, f.content]),
    '--',
    ...command,
  ];
}
