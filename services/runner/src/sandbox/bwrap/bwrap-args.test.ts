import { bwrapOptions, hostArgv, innerArgv, nulSeparated, type BwrapLayout } from './bwrap-args';

const layout: BwrapLayout = {
  workspaceDir: '/srv/workspaces/run-1',
  socketsDir: '/tmp/conveyor-sandbox/s-abc',
  readOnlyPaths: ['/repo/node_modules'],
  usrSymlinks: { bin: 'usr/bin', lib: 'usr/lib' },
  forwarders: [
    { port: 3128, socketName: 'egress.sock' },
    { port: 41000, socketName: 'endpoint-0.sock' },
  ],
  seccompFile: '/var/lib/conveyor/sandbox/seccomp.bpf',
};

/** The pairs/triples of one option in an argument list, e.g. all `--ro-bind SRC DEST`. */
const option = (args: string[], name: string, arity: number) =>
  args.flatMap((a, i) => (a === name ? [args.slice(i + 1, i + 1 + arity)] : []));

describe('bwrapOptions', () => {
  const args = bwrapOptions(layout, { CONVEYOR_API_KEY: 'secret', PATH: '/usr/bin' }, '/workspace');

  it('unshares every namespace and dies with its parent', () => {
    expect(args.slice(0, 3)).toEqual(['--unshare-all', '--die-with-parent', '--new-session']);
    expect(args).not.toContain('--share-net');
  });

  it('forbids nested user namespaces and loads the seccomp filter from its descriptor', () => {
    expect(args).toEqual(
      expect.arrayContaining(['--unshare-user', '--disable-userns', '--assert-userns-disabled']),
    );
    expect(option(args, '--seccomp', 1)).toEqual([['4']]);
  });

  it('binds only the tool chain read-only, the workspace read-write and the sockets read-only', () => {
    expect(option(args, '--bind', 2)).toEqual([['/srv/workspaces/run-1', '/workspace']]);
    const readOnly = option(args, '--ro-bind', 2).map(([src]) => src);
    expect(readOnly).toEqual(['/usr', '/repo/node_modules', '/tmp/conveyor-sandbox/s-abc']);
    expect(option(args, '--ro-bind-try', 2).every(([src]) => src!.startsWith('/etc/'))).toBe(true);
    expect(option(args, '--symlink', 2)).toEqual([
      ['usr/bin', '/bin'],
      ['usr/lib', '/lib'],
    ]);
    expect(option(args, '--tmpfs', 1)).toEqual([['/tmp']]);
  });

  it("mounts /proc read-only right after it, so nothing writes the sandbox's init's memory through it", () => {
    expect(option(args, '--remount-ro', 1)).toEqual([['/proc'], ['/']]);
    expect(args.indexOf('/proc', args.indexOf('--remount-ro'))).toBeGreaterThan(args.indexOf('--proc'));
  });

  it('mounts the private /tmp before the read-only paths, so one under the host /tmp stays visible', () => {
    const under = bwrapOptions(
      { ...layout, readOnlyPaths: ['/tmp/checkout/node_modules'] },
      {},
      '/workspace',
    );
    expect(under.indexOf('/tmp/checkout/node_modules')).toBeGreaterThan(under.indexOf('--tmpfs'));
  });

  it('makes the root read-only after the mounts, and sets exactly the given environment', () => {
    expect(args.slice(args.lastIndexOf('--remount-ro'))[1]).toBe('/');
    expect(args.lastIndexOf('--remount-ro')).toBeGreaterThan(args.lastIndexOf('--bind'));
    expect(args).toContain('--clearenv');
    expect(option(args, '--setenv', 2)).toEqual([
      ['CONVEYOR_API_KEY', 'secret'],
      ['PATH', '/usr/bin'],
    ]);
    expect(option(args, '--chdir', 1)).toEqual([['/workspace']]);
  });
});

describe('hostArgv', () => {
  const argv = hostArgv(
    { uid: 1234567, maxProcesses: 65, cgroupProcs: ['/sys/fs/cgroup/pids/x/cgroup.procs'] },
    layout.seccompFile,
    '/usr/bin/bwrap',
    ['/bin/true'],
  );

  it('joins the cgroups, limits processes and drops to the run uid with no capabilities before bwrap', () => {
    const at = (s: string) => argv.indexOf(s);
    expect(argv.slice(0, 6)).toEqual([
      '/bin/sh',
      '-c',
      expect.any(String),
      'sh',
      layout.seccompFile,
      '/sys/fs/cgroup/pids/x/cgroup.procs',
    ]);
    // The filter is opened as root on the descriptor bwrap reads it from.
    expect(argv[2]).toContain('exec "$@" 4<"$bpf"');
    expect(at('prlimit')).toBeLessThan(at('setpriv'));
    expect(argv).toContain('--nproc=65');
    expect(argv).not.toContainEqual(expect.stringMatching(/^--data=/));
    expect(argv.slice(at('setpriv'), at('/usr/bin/bwrap'))).toEqual([
      'setpriv',
      '--reuid=1234567',
      '--regid=1234567',
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
    ]);
    expect(argv.slice(at('/usr/bin/bwrap'))).toEqual(['/usr/bin/bwrap', '--args', '3', '--', '/bin/true']);
  });

  it('caps the data segment per process when there is no memory cgroup', () => {
    expect(
      hostArgv({ uid: 5, maxProcesses: 8, dataBytes: 1024, cgroupProcs: [] }, 'f.bpf', 'bwrap', ['x']),
    ).toContain('--data=1024');
  });
});

describe('innerArgv', () => {
  it('starts the forwarders, then the command', () => {
    const argv = innerArgv(layout.forwarders, ['node', 'agent.js']);
    expect(argv.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(argv.slice(3)).toEqual([
      'sandbox',
      '0C38 A028',
      '3128',
      'egress.sock',
      '41000',
      'endpoint-0.sock',
      '--',
      'node',
      'agent.js',
    ]);
  });

  it('runs the command alone without forwarders', () => {
    expect(innerArgv([], ['true'])).toEqual(['true']);
  });
});

it('nulSeparated terminates every argument with NUL (bwrap --args)', () => {
  expect(nulSeparated(['--setenv', 'A', 'b c']).toString()).toBe('--setenv\0A\0b c\0');
});
