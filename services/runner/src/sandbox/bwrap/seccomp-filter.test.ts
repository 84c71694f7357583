import { ALLOWED_SOCKET_FAMILIES, buildSeccompFilter, DENIED_SYSCALLS } from './seccomp-filter';
import { SandboxUnavailable } from '../run-sandbox';

describe('the sandbox seccomp filter (libseccomp, python3-seccomp)', () => {
  it('builds a BPF program for x86_64 and for aarch64', async () => {
    const [x64, arm64] = await Promise.all([buildSeccompFilter('x64'), buildSeccompFilter('arm64')]);
    // sock_filter instructions are 8 bytes; the two differ in their architecture check and syscall numbers.
    for (const bpf of [x64, arm64]) expect(bpf.length % 8).toBe(0);
    // At least one instruction per denied syscall.
    expect(x64.length).toBeGreaterThan(50 * 8);
    expect(x64.equals(arm64)).toBe(false);
  });

  it('denies what Docker’s default profile denies', () => {
    const denied = DENIED_SYSCALLS.flatMap((rule) => rule.names);
    expect(denied).toEqual(
      expect.arrayContaining([
        'keyctl',
        'add_key',
        'request_key',
        'bpf',
        'perf_event_open',
        'userfaultfd',
        'mount',
        'umount2',
        'pivot_root',
        'unshare',
        'setns',
        'clone',
        'clone3',
        'kexec_load',
        'init_module',
        'finit_module',
        'delete_module',
        'open_by_handle_at',
        'reboot',
        'swapon',
        'settimeofday',
        'clock_settime',
        'syslog',
        'acct',
        'iopl',
        'ioperm',
      ]),
    );
  });

  it('refuses socket() in every address family but unix, inet, inet6 and netlink, and any wider value', () => {
    const rule = DENIED_SYSCALLS.find((r) => r.names.includes('socket'));
    expect(rule?.names).toEqual(['socket', 'socketpair']);
    const denied = (rule?.when ?? []).flatMap((c) => (c.op === 'MASKED_EQ' ? [c.value] : []));
    for (let family = 0; family <= 45; family++)
      expect([family, denied.includes(family)]).toEqual([family, !ALLOWED_SOCKET_FAMILIES.includes(family)]);
    expect(denied).toContain(40); // AF_VSOCK
    expect(rule?.when).toContainEqual({ arg: 0, op: 'GT', value: 45 });
  });

  it('refuses an architecture it has no filter for, so no run starts unfiltered', async () => {
    await expect(buildSeccompFilter('riscv64')).rejects.toBeInstanceOf(SandboxUnavailable);
  });
});
