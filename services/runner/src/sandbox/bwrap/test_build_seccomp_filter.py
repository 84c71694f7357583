import ctypes
import errno
import os
import platform
import socket
import unittest

import seccomp

from build_seccomp_filter import build_filter

NATIVE = {"x86_64": "X86_64", "aarch64": "AARCH64"}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)

POLICY = [
    {"names": ["keyctl"], "errno": "EPERM"},
    {"names": ["clone3"], "errno": "ENOSYS"},
    {
        "names": ["socket"],
        "errno": "EPERM",
        "when": [{"arg": 0, "op": "MASKED_EQ", "mask": 0xFFFFFFFF, "value": 40}, {"arg": 0, "op": "GT", "value": 45}],
    },
]


def errno_in_filtered_child(call):
    """Runs `call` in a child under the filter; returns the errno it failed with, 0 when it succeeded."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            build_filter({"arch": NATIVE, "rules": POLICY}).load()
            code = call()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def raw_syscall(name, *args):
    def call():
        result = libc.syscall(seccomp.resolve_syscall(seccomp.Arch.NATIVE, name), *args)
        return ctypes.get_errno() if result < 0 else 0

    return call


class BuildSeccompFilterTest(unittest.TestCase):
    def test_builds_bpf_for_both_architectures(self):
        programs = {}
        for arch in ("X86_64", "AARCH64"):
            r, w = os.pipe()
            with os.fdopen(w, "wb") as out:
                build_filter({"arch": arch, "rules": POLICY}).export_bpf(out)
            with os.fdopen(r, "rb") as bpf:
                programs[arch] = bpf.read()
            # sock_filter instructions are 8 bytes.
            self.assertEqual(len(programs[arch]) % 8, 0)
        self.assertNotEqual(programs["X86_64"], programs["AARCH64"])

    def test_leaves_out_a_syscall_the_architecture_lacks(self):
        # vm86 exists on no 64-bit architecture: the rule is skipped, not an error.
        build_filter({"arch": "AARCH64", "rules": [{"names": ["vm86", "keyctl"], "errno": "EPERM"}]})

    def test_refuses_an_unknown_comparison(self):
        with self.assertRaises(ValueError):
            build_filter({"arch": NATIVE, "rules": [{"names": ["socket"], "errno": "EPERM", "when": [{"arg": 0, "op": "LT", "value": 1}]}]})

    def test_denies_with_the_rules_errno_once_loaded(self):
        self.assertEqual(errno_in_filtered_child(raw_syscall("keyctl", 0, 0, 0, 0, 0)), errno.EPERM)
        self.assertEqual(errno_in_filtered_child(raw_syscall("clone3", 0, 0)), errno.ENOSYS)

    def test_denies_a_socket_family_by_condition_and_a_wider_value(self):
        self.assertEqual(errno_in_filtered_child(raw_syscall("socket", 40, socket.SOCK_STREAM, 0)), errno.EPERM)
        # AF_UNIX with an upper bit set: the kernel would read it as 1, the GT condition sees all 64 bits.
        wide = ctypes.c_ulong((1 << 32) | socket.AF_UNIX)
        self.assertEqual(errno_in_filtered_child(raw_syscall("socket", wide, socket.SOCK_STREAM, 0)), errno.EPERM)
        self.assertEqual(errno_in_filtered_child(raw_syscall("socket", socket.AF_UNIX, socket.SOCK_STREAM, 0)), 0)


if __name__ == "__main__":
    unittest.main()
