import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

// No Docker engine here: these checks read deploy/Dockerfile the way the build would use it, and compare its recipe
// with scripts/kubernetes/images.sh, which builds the same image without Docker.
const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const SERVICES = ['gateway', 'ingress', 'orchestrator', 'runner'];

describe('deploy/Dockerfile, the one image recipe of the four services', () => {
  const text = read('deploy/Dockerfile');
  const stages = text.split(/^FROM /m).slice(1);
  const runtime = stages[stages.length - 1]!;

  it('is the only Dockerfile: no service keeps a copy of its own', () => {
    for (const service of SERVICES)
      expect(existsSync(path.join(ROOT, 'services', service, 'Dockerfile'))).toBe(false);
  });

  it('builds the service named by SERVICE in stages and runs a slim Node 20 image with production files only', () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    expect(stages.map((s) => s.split('\n')[0])).toEqual([
      '${NODE_IMAGE} AS build',
      'build AS prune',
      '${NODE_IMAGE} AS runtime',
    ]);
    for (const stage of stages) expect(stage).toMatch(/^ARG SERVICE$/m);
    expect(text).toContain('npx turbo run build --filter=@conveyor/${SERVICE}...');
    expect(text).toContain('sh scripts/docker/stage-app.sh /app /out @conveyor/${SERVICE}');
    expect(runtime).toContain('COPY --from=prune /out /app');
    expect(runtime).not.toMatch(/^COPY (?!--from)/m);
  });

  it('runs as the non-root node user under tini, starting the built entry point of SERVICE', () => {
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^ENV NODE_ENV=production CONVEYOR_SERVICE=\$\{SERVICE\} /m);
    expect(runtime).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
    expect(runtime).toContain('CMD ["/bin/sh", "-c", "exec node services/${CONVEYOR_SERVICE}/dist/main.js"]');
    for (const service of SERVICES)
      expect(existsSync(path.join(ROOT, 'services', service, 'src/main.ts'))).toBe(true);
  });

  it('shares its packages, accounts and /app staging with the Kubernetes image build, so the two cannot drift', () => {
    const images = read('scripts/kubernetes/images.sh');
    expect(runtime).toContain('sh /tmp/image/setup-rootfs.sh');
    expect(images).toContain('chroot "$rootfs" sh /tmp/image/setup-rootfs.sh');
    expect(images).toContain('deploy/image/packages.txt');
    expect(images).toContain('scripts/docker/stage-app.sh');
    expect(read('deploy/image/setup-rootfs.sh')).toContain('packages.txt');
    // Neither build names a package of its own.
    expect(text).not.toMatch(/apt-get install/);
    expect(images).not.toMatch(/--include=[a-z]/);
  });

  it('installs what every service and the runner sandbox need from Debian', () => {
    const packages = read('deploy/image/packages.txt')
      .split('\n')
      .filter((line) => line && !line.startsWith('#'));
    for (const pkg of [
      'git',
      'tini',
      'ca-certificates',
      'bubblewrap',
      'socat',
      'python3-seccomp',
      'e2fsprogs',
    ])
      expect(packages).toContain(pkg);
  });
});

describe('the image build inputs', () => {
  it('keeps dependencies, build output and local data out of the build context', () => {
    const ignore = read('.dockerignore').split('\n');
    for (const entry of ['**/node_modules', '**/dist', '.git', '.conveyor', '**/.env'])
      expect(ignore).toContain(entry);
    // Workspace manifests stay in: `npm ci` needs every workspace package-lock.json lists.
    expect(ignore).toContain('!tests/*/package.json');
  });

  it('loads protos/ from <app>/protos, where the images copy it', () => {
    expect(read('packages/proto/src/load-protos.ts')).toContain("path.resolve(__dirname, '../../../protos')");
  });
});
