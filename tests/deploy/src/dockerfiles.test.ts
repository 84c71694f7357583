import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

// No Docker engine here: these checks read the Dockerfiles the way the build would use them.
const ROOT = path.resolve(__dirname, '../../..');
const PORTS = {
  gateway: ['PORT', 8080],
  ingress: ['PORT', 8090],
  orchestrator: ['HTTP_PORT', 8081],
  runner: ['HTTP_PORT', 8082],
} as const;

describe.each(Object.entries(PORTS))('services/%s/Dockerfile', (service, [portVar, port]) => {
  const text = readFileSync(path.join(ROOT, 'services', service, 'Dockerfile'), 'utf8');
  const stages = text.split(/^FROM /m).slice(1);
  const runtime = stages[stages.length - 1]!;

  it('builds in stages and runs a slim Node 20 image with production files only', () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    expect(stages.map((s) => s.split('\n')[0])).toEqual([
      '${NODE_IMAGE} AS build',
      'build AS prune',
      '${NODE_IMAGE} AS runtime',
    ]);
    expect(text).toContain(`npx turbo run build --filter=@conveyor/${service}...`);
    expect(text).toContain(`node scripts/docker/prune-workspaces.js @conveyor/${service}`);
    expect(text).toMatch(/npm install --omit=dev --ignore-scripts/);
    expect(runtime).toContain('COPY --from=prune /out /app');
    expect(runtime).not.toMatch(/^COPY (?!--from)/m);
  });

  it('runs as the non-root node user with a HEALTHCHECK on /healthz', () => {
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^ENV NODE_ENV=production /m);
    const healthcheck = /^HEALTHCHECK .*\\\n\s+CMD (.*)$/m.exec(runtime)?.[1] ?? '';
    expect(healthcheck).toContain(`process.env.${portVar}||${port}`);
    expect(healthcheck).toContain('/healthz');
    expect(runtime).toMatch(new RegExp(`^EXPOSE .*\\b${port}\\b`, 'm'));
  });

  it('starts the built entry point of the service', () => {
    expect(runtime).toMatch(new RegExp(`^CMD \\["node", "services/${service}/dist/main.js"\\]$`, 'm'));
    expect(existsSync(path.join(ROOT, 'services', service, 'src/main.ts'))).toBe(true);
  });
});

describe('the image build inputs', () => {
  it('keeps dependencies, build output and local data out of the build context', () => {
    const ignore = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const entry of ['**/node_modules', '**/dist', '.git', '.conveyor', '**/.env'])
      expect(ignore).toContain(entry);
    // Workspace manifests stay in: `npm ci` needs every workspace package-lock.json lists.
    expect(ignore).toContain('!tests/*/package.json');
  });

  it('loads protos/ from <app>/protos, where the images copy it', () => {
    expect(readFileSync(path.join(ROOT, 'packages/proto/src/load-protos.ts'), 'utf8')).toContain(
      "path.resolve(__dirname, '../../../protos')",
    );
  });
});
