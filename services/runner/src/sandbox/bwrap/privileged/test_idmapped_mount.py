import ctypes
import os
import tempfile
import unittest

from idmapped_mount import MountError, id_map, idmapped_mount

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18


def in_private_mount_namespace(work):
    """Runs `work` in a child with its own mount namespace (nothing it mounts reaches the host); its exit code."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            if libc.unshare(CLONE_NEWNS) == 0 and libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) == 0:
                code = work()
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


class IdmappedMountTest(unittest.TestCase):
    def test_maps_one_id(self):
        self.assertEqual(id_map(1000, 2000), "1000 2000 1\n")
        with self.assertRaises(ValueError):
            id_map(-1, 2000)

    def test_shows_the_files_of_one_uid_as_another(self):
        with tempfile.TemporaryDirectory() as root:
            source, target = os.path.join(root, "source"), os.path.join(root, "target")
            os.mkdir(source)
            os.mkdir(target)
            owned = os.path.join(source, "file")
            open(owned, "w").close()
            os.chown(owned, 1000, 1000)

            def work():
                idmapped_mount(source, target, 1000, 2000)
                seen = os.stat(os.path.join(target, "file"))
                return 0 if (seen.st_uid, seen.st_gid) == (2000, 2000) else 1

            self.assertEqual(in_private_mount_namespace(work), 0)
            # The source keeps its owner; the host never saw the mount.
            self.assertEqual(os.stat(owned).st_uid, 1000)
            self.assertEqual(os.listdir(target), [])

    def test_says_which_call_failed(self):
        with self.assertRaises(MountError) as caught:
            idmapped_mount("/nonexistent/source", "/nonexistent/target", 1000, 2000)
        self.assertEqual(str(caught.exception), "open_tree: No such file or directory")


if __name__ == "__main__":
    unittest.main()
