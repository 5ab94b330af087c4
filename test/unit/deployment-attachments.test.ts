import type { ReleaseRef } from '@shared/contracts/deployment';
import {
  type Attachment,
  envRefClashes,
  mountSlot,
  releaseAttachments,
  volumeAttachmentId,
} from '@shared/deployments/attachments';
import {
  ONE_WRITER,
  type Pending,
  redeployArgsProblem,
  replicasAfter,
  volumesAfter,
} from '@workflows/deployment/command-rules';

const base = { deploymentId: 'd1', orgId: 'o1', createdAt: new Date(0) };
const volume = (volumeId: string, mountPath: string): Attachment => ({
  ...base,
  _id: volumeAttachmentId(volumeId),
  kind: 'volume',
  volumeId,
  mountPath,
  slot: mountSlot('d1', mountPath),
});
const ref = (name: string): Attachment => ({
  ...base,
  _id: `env:d1:${name}`,
  kind: 'env',
  name,
  ref: { type: 'database', databaseId: `db-${name}` },
  slot: `env:d1:${name}`,
});

describe('deployment attachments', () => {
  it('fill one slot per mount path of a deployment, whatever trailing slashes it was written with', () => {
    expect(mountSlot('d1', '/data/')).toBe(mountSlot('d1', '/data'));
    expect(mountSlot('d1', '/data')).not.toBe(mountSlot('d2', '/data'));
    expect(mountSlot('d1', '/')).toBe('mount:d1:/');
  });

  it('become a release’s mounts and references in a fixed order, whatever order they were read in', () => {
    const read = [ref('B_URL'), volume('v2', '/var/b'), ref('A_URL'), volume('v1', '/srv/a')];
    expect(releaseAttachments(read)).toEqual({
      mounts: [
        { volumeId: 'v1', mountPath: '/srv/a' },
        { volumeId: 'v2', mountPath: '/var/b' },
      ],
      envRefs: [
        { name: 'A_URL', ref: { type: 'database', databaseId: 'db-A_URL' } },
        { name: 'B_URL', ref: { type: 'database', databaseId: 'db-B_URL' } },
      ],
    });
    expect(releaseAttachments([])).toEqual({ mounts: [], envRefs: [] });
  });

  it('name each variable that would be both plain and a reference', () => {
    expect(envRefClashes(['PORT', 'DATABASE_URL', 'A'], ['DATABASE_URL', 'A', 'B'])).toEqual(['A', 'DATABASE_URL']);
    expect(envRefClashes(['PORT'], ['DATABASE_URL'])).toEqual([]);
  });
});

describe('one writer per volume, as the deployment workflow judges commands', () => {
  const withVolume: ReleaseRef = { revision: 2, image: 'x', imageId: 'sha256:1', healthy: true, volumes: 1 };
  const without: ReleaseRef = { revision: 2, image: 'x', imageId: 'sha256:1', healthy: true };

  it('counts the replicas and volumes the queued commands leave', () => {
    const queue: Pending[] = [
      { command: 'scale', args: { replicas: 3, maxReplicas: 5 } },
      { command: 'redeploy', args: { remount: { volumes: 0 } } },
    ];
    expect(replicasAfter(queue, 1)).toBe(3);
    expect(replicasAfter([], 2)).toBe(2);
    expect(volumesAfter(queue, withVolume)).toBe(0);
    expect(volumesAfter([], withVolume)).toBe(1);
    expect(volumesAfter([{ command: 'redeploy', args: { remount: { volumes: 2 } } }], without)).toBe(2);
    // A release from before attachments mounts nothing.
    expect(volumesAfter([], without)).toBe(0);
    expect(volumesAfter([], undefined)).toBe(0);
  });

  it('takes a release of changed attachments with only its volume count', () => {
    expect(redeployArgsProblem({ remount: { volumes: 1 } })).toBeUndefined();
    expect(redeployArgsProblem({ remount: { volumes: 0 } })).toBeUndefined();
    expect(redeployArgsProblem({ remount: { volumes: -1 } })).toMatch(/number of volumes/);
    expect(redeployArgsProblem({ remount: { volumes: 1 }, envRef: 'x', envNames: [] })).toMatch(/number of volumes/);
    // Redeploys as before are judged as before.
    expect(redeployArgsProblem({})).toMatch(/envVars/);
  });

  it('says what to do in its refusal', () => {
    expect(ONE_WRITER).toMatch(/scale the deployment to 1 first/);
  });
});
