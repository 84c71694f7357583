import { execFile } from 'node:child_process';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SandboxUnavailable } from '../run-sandbox';

/**
 * Syscalls a run's processes may not make (docs/sandbox.md, "Seccomp filter"): what Docker's default profile denies
 * an unprivileged container. Each fails with its errno; everything else is allowed. `when`: denied only when one of
 * these argument conditions holds; without it, denied outright.
 */
export interface DeniedSyscall {
  names: string[];
  errno: 'EPERM' | 'ENOSYS';
  when?: ArgCondition[];
}

/**
 * One comparison on one argument, libseccomp's: `MASKED_EQ` is `(arg & mask) == value`, `GT` compares all 64 bits.
 */
export type ArgCondition =
  { arg: number; op: 'MASKED_EQ'; mask: number; value: number } | { arg: number; op: 'GT'; value: number };

/** Any of `bits` set in argument `arg`. */
const anyBit = (arg: number, bits: number[]): ArgCondition[] =>
  bits.map((bit) => ({ arg, op: 'MASKED_EQ', mask: bit, value: bit }));

/** Argument `arg` as the kernel reads a 32-bit `int`/`pid_t` (upper bits ignored) equal to one of `values`. */
const int32Is = (arg: number, values: number[]): ArgCondition[] =>
  values.map((value) => ({ arg, op: 'MASKED_EQ', mask: 0xffffffff, value }));

/** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET. */
const CLONE_NAMESPACE_FLAGS = [
  0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000,
];

/**
 * The address families a run may open sockets in: local sockets, IPv4, IPv6 and netlink (interface and route
 * listing: getaddrinfo, Node's os.networkInterfaces). Docker's default profile allows `socket` only for a list of
 * families (moby/profiles seccomp/default.json: below 12, then 13–18, 21, 22, 24, 26–33, 35, 36, 39, 41–45), which
 * leaves out AF_VSOCK (40), AF_ALG (38), DECnet, Econet, ATM SVC, IrDA, WAN pipe, ISDN and CAIF; this list is
 * narrower still: the sandbox's network namespace has only loopback, and every other family (packet, RDS, TIPC,
 * KCM, XDP, Bluetooth, CAN…) is kernel attack surface no run's tools use.
 */
export const ALLOWED_SOCKET_FAMILIES = [1, 2, 10, 16];
/** AF_MAX - 1 on current kernels (AF_MCTP): families above it do not exist yet. */
const HIGHEST_SOCKET_FAMILY = 45;
const DENIED_SOCKET_FAMILIES = Array.from({ length: HIGHEST_SOCKET_FAMILY + 1 }, (_, f) => f).filter(
  (family) => !ALLOWED_SOCKET_FAMILIES.includes(family),
);

/** The sandbox's init (bwrap, PID 1 of the run's PID namespace): stopping it would freeze the whole sandbox. */
const SANDBOX_INIT_PID = 1;

export const DENIED_SYSCALLS: readonly DeniedSyscall[] = [
  // The kernel's keyring, BPF, perf and userfaultfd: large attack surfaces no run needs.
  { names: ['keyctl', 'add_key', 'request_key'], errno: 'EPERM' },
  { names: ['bpf', 'perf_event_open', 'userfaultfd', 'lookup_dcookie'], errno: 'EPERM' },
  // Filesystems and namespaces: bwrap has built the run's view before the filter applies; nothing may change it.
  {
    names: [
      'mount',
      'umount',
      'umount2',
      'pivot_root',
      'fsopen',
      'fsconfig',
      'fsmount',
      'fspick',
      'move_mount',
      'open_tree',
      'mount_setattr',
      'unshare',
      'setns',
      'open_by_handle_at',
      'name_to_handle_at',
      'quotactl',
      'quotactl_fd',
    ],
    errno: 'EPERM',
  },
  { names: ['clone'], errno: 'EPERM', when: anyBit(0, CLONE_NAMESPACE_FLAGS) },
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library fall back to clone.
  { names: ['clone3'], errno: 'ENOSYS' },
  // The machine itself: modules, kexec, reboot, swap, clocks, the kernel log, accounting, I/O ports, vm86.
  {
    names: [
      'init_module',
      'finit_module',
      'delete_module',
      'create_module',
      'query_module',
      'get_kernel_syms',
      'kexec_load',
      'kexec_file_load',
      'reboot',
      'swapon',
      'swapoff',
      'settimeofday',
      'stime',
      'clock_settime',
      'clock_adjtime',
      'syslog',
      'acct',
      'iopl',
      'ioperm',
      'vm86',
      'vm86old',
      'nfsservctl',
      'uselib',
      'ustat',
      'sysfs',
      '_sysctl',
    ],
    errno: 'EPERM',
  },
  // Sockets only in the families above; the family is `socket`'s and `socketpair`'s first argument, an `int`:
  // anything whose 64 bits are above the highest family is refused as well (no upper-bit games).
  {
    names: ['socket', 'socketpair'],
    errno: 'EPERM',
    when: [...int32Is(0, DENIED_SOCKET_FAMILIES), { arg: 0, op: 'GT', value: HIGHEST_SOCKET_FAMILY }],
  },
  // Debuggers work on the run's own processes, but not on the sandbox's init: attached (then left), it stays stopped
  // and its command never ends. Its memory file is covered by the mount table (bwrap-args.ts) for the same reason.
  { names: ['ptrace'], errno: 'EPERM', when: int32Is(1, [SANDBOX_INIT_PID]) },
  { names: ['process_vm_readv', 'process_vm_writev'], errno: 'EPERM', when: int32Is(0, [SANDBOX_INIT_PID]) },
  // Docker allows these only with CAP_SYS_PTRACE; pidfd_getfd would copy any descriptor out of the init, whose
  // target (a pidfd) a filter cannot see.
  { names: ['kcmp', 'pidfd_getfd', 'process_madvise'], errno: 'EPERM' },
  // Docker's profile dropped io_uring (its own paths around seccomp); Node and the CLIs fall back to threads.
  { names: ['io_uring_setup', 'io_uring_enter', 'io_uring_register'], errno: 'EPERM' },
];

/** libseccomp's name of the architectures a runner runs on, by Node's `process.arch`. */
const ARCHES: Record<string, string> = { x64: 'X86_64', arm64: 'AARCH64' };

/** Reads the policy on stdin, writes the filter's BPF on stdout (tested by test_build_seccomp_filter.py). */
const BUILD_FILTER = path.join(__dirname, 'build_seccomp_filter.py');

/**
 * The run sandbox's seccomp filter as BPF, built with libseccomp (Debian's python3-seccomp, installed by
 * scripts/infra/sandbox.sh) for `arch`. Throws SandboxUnavailable when it cannot be built: runs are never started
 * without it.
 */
export function buildSeccompFilter(arch: string = process.arch): Promise<Buffer> {
  const target = ARCHES[arch];
  if (!target)
    return Promise.reject(new SandboxUnavailable(`no seccomp filter for the ${arch} architecture`));
  return new Promise((resolve, reject) => {
    const child = execFile(
      '/usr/bin/python3',
      ['-I', BUILD_FILTER],
      { encoding: 'buffer', env: {}, maxBuffer: 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err || stdout.length === 0 || stdout.length % 8 !== 0)
          return reject(
            new SandboxUnavailable(
              `cannot build the seccomp filter with libseccomp (python3-seccomp; scripts/infra.sh up installs it): ${
                stderr.toString().trim().split('\n').at(-1) || (err?.message ?? 'no output')
              }`,
            ),
          );
        resolve(stdout);
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(JSON.stringify({ arch: target, rules: DENIED_SYSCALLS }));
  });
}

/**
 * Builds the filter once, when the privileged helper starts, into `dir` (root-only): every run's bwrap reads it from
 * there. Returns its path.
 */
export async function writeSeccompFilter(dir: string): Promise<string> {
  const file = path.join(dir, 'seccomp.bpf');
  const partial = `${file}.${process.pid}`;
  await writeFile(partial, await buildSeccompFilter(), { mode: 0o644 });
  await rename(partial, file);
  return file;
}
