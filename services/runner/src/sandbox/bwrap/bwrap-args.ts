import path from 'node:path';

/** Where things appear inside a local sandbox. */
export const SANDBOX_WORKSPACE = '/workspace';
/** Directory of the unix sockets bridging the egress proxy and the policy's endpoints into the sandbox. */
export const SANDBOX_SOCKETS = '/run/conveyor';
/** Port of the egress proxy inside the sandbox's own network namespace. */
export const SANDBOX_PROXY_PORT = 3128;
/** First port of the policy's endpoints inside the sandbox, in policy order. */
export const SANDBOX_ENDPOINT_BASE_PORT = 41000;

/** A TCP port inside the sandbox forwarded by socat to a unix socket of the runner. */
export interface Forwarder {
  port: number;
  socketName: string;
}

export interface BwrapLayout {
  /** Host directory mounted read-write at `SANDBOX_WORKSPACE`. */
  workspaceDir: string;
  /** Host directory holding the forwarders' sockets, mounted read-only at `SANDBOX_SOCKETS`. */
  socketsDir: string;
  /** Host paths mounted read-only at the same place (the tool chain outside `/usr`, the agent CLIs' node_modules). */
  readOnlyPaths: string[];
  /** Host top-level names that are symlinks into `/usr` (usrmerge): recreated as symlinks instead of mounted. */
  usrSymlinks: Record<string, string>;
  forwarders: Forwarder[];
  /** The seccomp filter's BPF (`seccomp-filter.ts`): `hostArgv` opens it as root and bwrap reads it on `SECCOMP_FD`. */
  seccompFile: string;
}

/** The few files of `/etc` programs need (name resolution of localhost, CA certificates, users, the dynamic linker). */
export const ETC_ALLOW_LIST = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'ssl',
  'hosts',
  'nsswitch.conf',
  'passwd',
  'group',
  'localtime',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'gitconfig',
  'mime.types',
];

/** The descriptor on which bwrap reads the seccomp filter's BPF (`hostArgv` opens the file there). */
export const SECCOMP_FD = 4;

/**
 * bwrap's options for one command: every namespace unshared (user, pid, net, ipc, uts, cgroup), nothing of the host
 * but the tool chain read-only, the workspace read-write and a private /tmp; the caller's environment only.
 * No further user namespace can be made inside (`--disable-userns`: a nested one would hold every capability over
 * its own mounts), and the seccomp filter applies to the command and all it starts.
 * These go through `--args FD` so the environment (the run's key) never shows in a process list.
 */
export function bwrapOptions(layout: BwrapLayout, env: Record<string, string>, cwd: string): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--hostname', 'sandbox'];
  args.push('--unshare-user', '--disable-userns', '--assert-userns-disabled');
  args.push('--seccomp', String(SECCOMP_FD));
  args.push('--ro-bind', '/usr', '/usr');
  for (const [name, target] of Object.entries(layout.usrSymlinks)) args.push('--symlink', target, `/${name}`);
  for (const name of ETC_ALLOW_LIST) args.push('--ro-bind-try', `/etc/${name}`, `/etc/${name}`);
  // The private /tmp first: a read-only path under the host's /tmp (an installation there) is bound on top of it,
  // not hidden under it.
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  // /proc read-only: nothing in it is written to, and the sandbox's init (PID 1, bwrap itself) may not have its
  // memory written through /proc/1/mem (EROFS): code put there could stop it, and a stopped init never reports its
  // command's end. The filter refuses ptrace and process_vm_* on it; this is the rest.
  args.push('--remount-ro', '/proc');
  for (const p of layout.readOnlyPaths) args.push('--ro-bind', p, p);
  args.push('--bind', layout.workspaceDir, SANDBOX_WORKSPACE);
  args.push('--ro-bind', layout.socketsDir, SANDBOX_SOCKETS);
  // The root bwrap builds is a tmpfs: read-only once populated, so nothing outside /workspace and /tmp is writable.
  args.push('--remount-ro', '/');
  args.push('--chdir', cwd, '--clearenv');
  for (const [key, value] of Object.entries(env)) args.push('--setenv', key, value);
  return args;
}

/**
 * Runs inside the sandbox before the command: `sh -c SCRIPT sandbox PORTS_HEX PORT SOCKET ... -- argv`. Starts one
 * socat per forwarder (127.0.0.1:PORT → unix socket), waits until each listens (visible in /proc/net/tcp), then execs
 * the command. Exit status 125 when they do not come up.
 */
const FORWARDERS_SCRIPT = [
  'ports_hex=$1; shift',
  'while [ "$1" != -- ]; do',
  `  socat TCP-LISTEN:"$1",bind=127.0.0.1,fork,reuseaddr UNIX-CONNECT:"${SANDBOX_SOCKETS}/$2" 2>/dev/null &`,
  '  shift 2',
  'done',
  'shift',
  'for _ in $(seq 400); do',
  '  ready=1; for hex in $ports_hex; do grep -q ":$hex 00000000:0000 0A" /proc/net/tcp || ready=0; done',
  '  [ $ready = 1 ] && exec "$@"',
  '  sleep 0.005',
  'done',
  'echo "sandbox: network forwarders did not start" >&2; exit 125',
].join('\n');

/** The argv bwrap runs: the forwarders' script when there are forwarders, then the command. */
export function innerArgv(forwarders: Forwarder[], argv: string[]): string[] {
  if (forwarders.length === 0) return argv;
  const hex = forwarders.map((f) => f.port.toString(16).toUpperCase().padStart(4, '0')).join(' ');
  return [
    '/bin/sh',
    '-c',
    FORWARDERS_SCRIPT,
    'sandbox',
    hex,
    ...forwarders.flatMap((f) => [String(f.port), f.socketName]),
    '--',
    ...argv,
  ];
}

export interface Confinement {
  /** Unprivileged host uid/gid of this run alone. */
  uid: number;
  maxProcesses: number;
  /** Per-process data-segment cap, used only when no memory cgroup limits the run as a whole. */
  dataBytes?: number;
  /** `cgroup.procs` files (v1 hierarchies or one v2 group) the command joins before dropping privileges. */
  cgroupProcs: string[];
}

/**
 * Joins the run's cgroups as root, then execs the rest with the seccomp filter open on fd 4:
 * `sh -c JOIN sh BPF FILE... -- argv`. A filter that cannot be opened ends the shell before bwrap starts.
 */
const JOIN_CGROUPS = [
  'bpf=$1; shift',
  'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift',
  `exec "$@" ${SECCOMP_FD}<"$bpf"`,
].join('\n');

/**
 * The host-side argv: join the run's cgroups, set the run's rlimits, drop to the run's own uid with no capabilities
 * and no way to gain any (no_new_privs), then bwrap reading its options from fd 3.
 */
export function hostArgv(
  confinement: Confinement,
  seccompFile: string,
  bwrapPath: string,
  inner: string[],
): string[] {
  const limits = [
    `--nproc=${confinement.maxProcesses}`,
    ...(confinement.dataBytes ? [`--data=${confinement.dataBytes}`] : []),
  ];
  const id = String(confinement.uid);
  return [
    '/bin/sh',
    '-c',
    JOIN_CGROUPS,
    'sh',
    seccompFile,
    ...confinement.cgroupProcs,
    '--',
    'prlimit',
    ...limits,
    '--',
    'setpriv',
    `--reuid=${id}`,
    `--regid=${id}`,
    '--clear-groups',
    '--inh-caps=-all',
    '--bounding-set=-all',
    '--no-new-privs',
    '--',
    bwrapPath,
    '--args',
    '3',
    '--',
    ...inner,
  ];
}

/** bwrap's `--args` format: NUL-terminated arguments. */
export const nulSeparated = (args: string[]): Buffer => Buffer.from(args.map((a) => `${a}\0`).join(''));

/** Resolves a path inside the sandbox (relative ones against the workspace). */
export const insidePath = (p: string | undefined): string =>
  p ? path.posix.resolve(SANDBOX_WORKSPACE, p) : SANDBOX_WORKSPACE;
