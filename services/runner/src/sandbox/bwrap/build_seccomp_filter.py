"""The run sandbox's seccomp filter, built with libseccomp (Debian's python3-seccomp).

Reads the policy on stdin ({"arch": libseccomp's architecture name, "rules": DENIED_SYSCALLS of seccomp-filter.ts}),
writes the filter's BPF on stdout. The target architecture replaces the native one, so the filter can be built for
either; a syscall the target lacks is left out (it cannot be called there), and a syscall of another ABI (i386 or x32
on x86_64, arm on aarch64) kills the thread: no filter covers those numbers.
"""

import errno
import json
import sys

import seccomp


def argument(condition):
    """One comparison on one argument: MASKED_EQ is (arg & mask) == value, GT compares all 64 bits."""
    if condition["op"] == "MASKED_EQ":
        return seccomp.Arg(condition["arg"], seccomp.MASKED_EQ, condition["mask"], condition["value"])
    if condition["op"] == "GT":
        return seccomp.Arg(condition["arg"], seccomp.GT, condition["value"])
    raise ValueError("unknown comparison " + repr(condition["op"]))


def build_filter(spec):
    """Everything allowed but the rules' syscalls, each denied with its errno (when one of its conditions holds)."""
    arch = getattr(seccomp.Arch, spec["arch"])
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    if not f.exist_arch(arch):
        f.add_arch(arch)
        f.remove_arch(seccomp.Arch.NATIVE)
    for rule in spec["rules"]:
        action = seccomp.ERRNO(getattr(errno, rule["errno"]))
        for name in rule["names"]:
            if seccomp.resolve_syscall(arch, name) < 0:
                continue
            conditions = rule.get("when")
            if conditions is None:
                f.add_rule(action, name)
            else:
                # One rule per condition: libseccomp ANDs the conditions of one rule, the policy means any of them.
                for condition in conditions:
                    f.add_rule(action, name, argument(condition))
    return f


def main():
    build_filter(json.load(sys.stdin)).export_bpf(sys.stdout.buffer)


if __name__ == "__main__":
    main()
