"""Attaches an idmapped copy of the mount at SOURCE to TARGET, showing files of uid/gid FROM as TO.

Usage: idmapped_mount.py SOURCE TARGET FROM TO (as root). open_tree(OPEN_TREE_CLONE), mount_setattr(MOUNT_ATTR_IDMAP)
with a user namespace mapping FROM to TO, move_mount. Hand-written with ctypes because Debian 12's util-linux (2.38)
has no `X-mount.idmap` and no Debian package offers the call; the syscall numbers are the same on x86_64 and aarch64
(the new mount API was numbered once for every architecture).
"""

import ctypes
import os
import sys

SYS_OPEN_TREE = 428
SYS_MOVE_MOUNT = 429
SYS_MOUNT_SETATTR = 442
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
OPEN_TREE_CLONE = 1
OPEN_TREE_CLOEXEC = 0o2000000
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_IDMAP = 0x00100000
CLONE_NEWUSER = 0x10000000

libc = ctypes.CDLL(None, use_errno=True)


class MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


class MountError(Exception):
    pass


def check(result, what):
    if result < 0:
        raise MountError(what + ": " + os.strerror(ctypes.get_errno()))
    return result


def id_map(from_id, to_id):
    """The one-line uid_map/gid_map of a user namespace showing FROM as TO."""
    if from_id < 0 or to_id < 0:
        raise ValueError("ids must not be negative")
    return "%d %d 1\n" % (from_id, to_id)


def mapping_namespace(from_id, to_id):
    """An fd of a new user namespace mapping FROM to TO, made by a child that unshares and waits to be released."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        if libc.unshare(CLONE_NEWUSER) != 0:
            os._exit(1)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    try:
        own = os.readlink("/proc/self/ns/user")
        while os.readlink("/proc/%d/ns/user" % pid) == own:
            if os.waitpid(pid, os.WNOHANG)[0]:
                raise MountError("unshare(CLONE_NEWUSER) failed")
        for name in ("uid_map", "gid_map"):
            with open("/proc/%d/%s" % (pid, name), "w") as f:
                f.write(id_map(from_id, to_id))
        return os.open("/proc/%d/ns/user" % pid, os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(w)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass


def idmapped_mount(source, target, from_id, to_id):
    ns = mapping_namespace(from_id, to_id)
    try:
        fd = check(libc.syscall(SYS_OPEN_TREE, AT_FDCWD, source.encode(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC), "open_tree")
        try:
            attr = MountAttr(MOUNT_ATTR_IDMAP, 0, 0, ns)
            check(
                libc.syscall(SYS_MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr)),
                "mount_setattr",
            )
            check(libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, target.encode(), MOVE_MOUNT_F_EMPTY_PATH), "move_mount")
        finally:
            os.close(fd)
    finally:
        os.close(ns)


def main(argv):
    if len(argv) != 5:
        sys.exit("usage: idmapped_mount.py SOURCE TARGET FROM TO")
    try:
        idmapped_mount(argv[1], argv[2], int(argv[3]), int(argv[4]))
    except (MountError, ValueError) as err:
        sys.exit(str(err))


if __name__ == "__main__":
    main(sys.argv)
