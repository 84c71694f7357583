import { environmentSchema } from '../environment-setup';
import { snapshotRef } from './environment-snapshots';

const spec = (extra: object = {}) =>
  environmentSchema.parse({
    repositories: [{ url: 'https://git.example/acme/app.git', ref: 'main' }],
    setup_commands: ['npm ci'],
    ...extra,
  });

describe('snapshotRef', () => {
  it('keys a snapshot by team and by everything that decides what setup produces', () => {
    const base = snapshotRef('team-a', spec(), false)!.key;
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    expect(snapshotRef('team-a', spec(), false)!.key).toBe(base);
    for (const changed of [
      snapshotRef('team-b', spec(), false),
      snapshotRef('team-a', spec({ setup_commands: ['npm install'] }), false),
      snapshotRef('team-a', spec({ repositories: [{ url: 'https://git.example/acme/app.git' }] }), false),
      snapshotRef('team-a', spec({ docker_image: 'node:22' }), false),
      snapshotRef('team-a', spec({ allowed_hosts: ['registry.npmjs.org'] }), false),
    ])
      expect(changed!.key).not.toBe(base);
  });

  it('is none for debug sessions, environments that opt out, and environments with nothing to set up', () => {
    expect(snapshotRef('team-a', spec(), true)).toBeUndefined();
    expect(snapshotRef('team-a', spec({ snapshot: false }), false)).toBeUndefined();
    expect(snapshotRef('team-a', environmentSchema.parse({}), false)).toBeUndefined();
  });
});
