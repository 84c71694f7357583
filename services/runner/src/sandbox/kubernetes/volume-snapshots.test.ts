import { fakeVolumeSnapshotApi as fakeApi } from '../../test-support/volume-snapshot-fakes';
import { KubernetesApiError } from './kubernetes-api';
import { snapshotName, TEAM_LABEL, VolumeSnapshots } from './volume-snapshots';

const settings = {
  namespace: 'runs',
  snapshotClass: 'csi-hostpath-snapclass',
  storageClass: 'csi-hostpath-sc',
};
const teamA = { teamId: 'team-a', key: 'env-hash-1' };
const teamB = { teamId: 'team-b', key: 'env-hash-1' };

describe('VolumeSnapshots', () => {
  it("cuts a snapshot of the setup run's claim, and a later run of the team gets a claim cloned from it", async () => {
    const fake = fakeApi();
    const owner = { name: 'conveyor-runner-abc', uid: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9' };
    const volumes = new VolumeSnapshots(fake.api, { ...settings, owner });
    const setup = await volumes.workspaceClaim('run-1', 1 << 30, teamA);
    expect(setup.startedFrom).toBeUndefined();
    // Owned by the runner pod: a runner that goes without cleaning up leaves no claim behind.
    expect(setup.body.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', ...owner }]);
    await volumes.createClaim(setup);
    expect(await volumes.capture(teamA, setup.name)).toBe(snapshotName(teamA));
    expect(fake.snapshots.get(snapshotName(teamA))).toMatchObject({ source: 'run-1-workspace' });

    // Not ready yet: the run sets up from scratch on an empty claim.
    expect((await volumes.workspaceClaim('run-2', 1 << 30, teamA)).body.spec.dataSource).toBeUndefined();
    fake.ready();
    const next = await volumes.workspaceClaim('run-3', 1 << 30, teamA);
    expect(next.startedFrom).toBe(snapshotName(teamA));
    expect(next.body.spec).toEqual({
      storageClassName: 'csi-hostpath-sc',
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: String(1 << 30) } },
      dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: snapshotName(teamA) },
    });
  });

  it("never makes one team's snapshot another team's workspace, even for the same environment key", async () => {
    const fake = fakeApi();
    const volumes = new VolumeSnapshots(fake.api, settings);
    await volumes.capture(teamA, 'run-1-workspace');
    fake.ready();
    const other = await volumes.workspaceClaim('run-b', 1 << 30, teamB);
    expect(other.body.spec.dataSource).toBeUndefined();
    expect(other.startedFrom).toBeUndefined();
    // Team B's own capture is its own object, not refused as a duplicate of team A's.
    expect(await volumes.capture(teamB, 'run-b-workspace')).toBe(snapshotName(teamB));
    expect(snapshotName(teamB)).not.toBe(snapshotName(teamA));
  });

  it("refuses a snapshot of the team's name that is labelled as another team's", async () => {
    const fake = fakeApi();
    const volumes = new VolumeSnapshots(fake.api, settings);
    await volumes.capture(teamB, 'run-b-workspace');
    // Someone with rights in the namespace renames team B's snapshot to the name team A's would have.
    fake.snapshots.set(snapshotName(teamA), fake.snapshots.get(snapshotName(teamB))!);
    fake.ready();
    expect((await volumes.workspaceClaim('run-a', 1 << 30, teamA)).body.spec.dataSource).toBeUndefined();
    expect(fake.snapshots.get(snapshotName(teamA))!.labels[TEAM_LABEL]).toBeDefined();
  });

  it('leaves a snapshot another run made first, and drops one that is already gone without failing', async () => {
    const fake = fakeApi();
    const volumes = new VolumeSnapshots(fake.api, settings);
    await volumes.capture(teamA, 'run-1-workspace');
    expect(await volumes.capture(teamA, 'run-2-workspace')).toBeUndefined();
    expect(fake.snapshots.get(snapshotName(teamA))).toMatchObject({ source: 'run-1-workspace' });
    await volumes.drop(teamA);
    await volumes.drop(teamA);
    expect(fake.snapshots.size).toBe(0);
    await expect(volumes.deleteClaim('never-made')).resolves.toBeUndefined();
  });

  it('passes other API failures on', async () => {
    const fake = fakeApi();
    fake.api.createVolumeSnapshot = () => Promise.reject(new KubernetesApiError(403, 'forbidden'));
    const volumes = new VolumeSnapshots(fake.api, settings);
    await expect(volumes.capture(teamA, 'run-1-workspace')).rejects.toMatchObject({ status: 403 });
  });
});
