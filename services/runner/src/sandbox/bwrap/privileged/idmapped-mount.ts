import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/**
 * Attaches an idmapped copy of the mount at SOURCE to TARGET, showing files of uid/gid FROM as TO: open_tree(CLONE),
 * mount_setattr(MOUNT_ATTR_IDMAP) with a user namespace mapping FROM to TO, move_mount. Hand-written (ctypes, ~30
 * lines) because Debian 12's util-linux (2.38) has no `X-mount.idmap` and no Debian package offers the call; the
 * syscall numbers are the same on x86_64 and aarch64 (the new mount API was numbered once for every architecture).
 */
const SCRIPT = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [('set', ctypes.c_uint64), ('clr', ctypes.c_uint64), ('prop', ctypes.c_uint64), ('userns', ctypes.c_uint64)]
def check(r, what):
    if r < 0: sys.exit(what + ': ' + os.strerror(ctypes.get_errno()))
    return r
src, dst, frm, to = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    if libc.unshare(0x10000000) != 0: os._exit(1)
    os.read(r, 1); os._exit(0)
os.close(r)
own = os.readlink('/proc/self/ns/user')
while os.readlink('/proc/%d/ns/user' % pid) == own:
    if os.waitpid(pid, os.WNOHANG)[0]: sys.exit('unshare(CLONE_NEWUSER) failed')
for name in ('uid_map', 'gid_map'):
    with open('/proc/%d/%s' % (pid, name), 'w') as f: f.write('%d %d 1\\n' % (frm, to))
ns = os.open('/proc/%d/ns/user' % pid, os.O_RDONLY | os.O_CLOEXEC)
os.close(w); os.waitpid(pid, 0)
fd = check(libc.syscall(428, -100, src.encode(), 1 | 0o2000000), 'open_tree')
attr = Attr(0x00100000, 0, 0, ns)
check(libc.syscall(442, fd, b'', 0x1000, ctypes.byref(attr), ctypes.sizeof(attr)), 'mount_setattr')
check(libc.syscall(429, fd, b'', -100, dst.encode(), 0x4), 'move_mount')
`;

export async function idmappedMount(source: string, target: string, from: number, to: number): Promise<void> {
  try {
    await exec('/usr/bin/python3', ['-I', '-c', SCRIPT, source, target, String(from), String(to)], {
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' },
    });
  } catch (err) {
    const { stderr, message } = err as { stderr?: string; message: string };
    throw new Error(`idmapped mount of ${source}: ${(stderr || message).trim()}`);
  }
}
