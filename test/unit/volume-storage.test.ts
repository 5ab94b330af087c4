import type Docker from 'dockerode';

import { createEngineVolumes } from '@activities/providers/engine-volumes';
import { parseMountinfo, volumePaths } from '@activities/providers/volume-host';
import { parseConfig } from '@shared/config';
import { LABELS } from '@shared/constants';
import { checkSizeGb, engineVolumeName, mountTargetError } from '@shared/volumes/mount';
import { volumeWorkflowVisibility } from '@shared/volumes/visibility';

const ID = '3f1c2b1e-1111-4a4a-8a8a-123456789abc';
/** mountSpec and the checks before any call never reach the engine. */
const unreachable = {} as Docker;

describe('volume storage: names, paths and mount specs', () => {
  it('builds every path from a checked volume ID, and refuses anything else before it names a file', () => {
    expect(volumePaths('/srv/volumes/inst', ID)).toEqual({
      image: `/srv/volumes/inst/${ID}.img`,
      partial: `/srv/volumes/inst/${ID}.img.partial`,
      mountpoint: `/srv/volumes/inst/${ID}`,
      data: `/srv/volumes/inst/${ID}/data`,
    });
    for (const bad of ['../../etc', `${ID}/..`, ID.toUpperCase(), `${ID} `, '', '$(reboot)'])
      expect(() => volumePaths('/srv/volumes/inst', bad)).toThrow('a volume ID must be a lower-case UUID');
    expect(engineVolumeName(ID)).toBe(`slipway-vol-${ID}`);
    expect(() => engineVolumeName('x;rm -rf /')).toThrow(TypeError);
  });

  it('takes whole sizes from 1 GB', () => {
    expect(() => checkSizeGb(1)).not.toThrow();
    for (const bad of [0, -1, 0.5, 1.5, Number.NaN, 1e9]) expect(() => checkSizeGb(bad)).toThrow(/whole number of GB/);
  });

  it('reads mountinfo, escaped paths included', () => {
    const text = [
      '22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw',
      `581 27 7:0 / /srv/volumes/inst/${ID} rw,nosuid,nodev,relatime - ext4 /dev/loop0 rw`,
      '600 27 0:50 / /mnt/with\\040space rw shared:5 master:2 - tmpfs tmpfs rw,size=1024k',
      '',
    ].join('\n');
    expect(parseMountinfo(text)).toEqual([
      { mountpoint: '/', fstype: 'ext4', source: '/dev/vda' },
      { mountpoint: `/srv/volumes/inst/${ID}`, fstype: 'ext4', source: '/dev/loop0' },
      { mountpoint: '/mnt/with space', fstype: 'tmpfs', source: 'tmpfs' },
    ]);
  });

  it("gives a container a labelled engine volume that binds the image's data directory", () => {
    const volumes = createEngineVolumes({ docker: unreachable, instance: 'inst-1', dir: '/srv/volumes' });
    expect(volumes.mountSpec({ volumeId: ID, orgId: 'org-1' }, '/var/lib/data')).toEqual({
      Type: 'volume',
      Source: `slipway-vol-${ID}`,
      Target: '/var/lib/data',
      ReadOnly: false,
      VolumeOptions: {
        NoCopy: false,
        Labels: {
          [LABELS.managed]: 'true',
          [LABELS.volumeId]: ID,
          [LABELS.orgId]: 'org-1',
          [LABELS.instance]: 'inst-1',
        },
        DriverConfig: {
          Name: 'local',
          Options: { type: 'none', o: 'bind', device: `/srv/volumes/inst-1/${ID}/data` },
        },
      },
    });
    expect(() => volumes.mountSpec({ volumeId: ID, orgId: 'org 1' }, '/data')).toThrow(/org ID/);
    expect(() => volumes.mountSpec({ volumeId: 'nope', orgId: 'org-1' }, '/data')).toThrow(/UUID/);
    expect(() => volumes.mountSpec({ volumeId: ID, orgId: 'org-1' }, 'data')).toThrow(/absolute/);
  });

  it('refuses an instance label that would not be one directory', () => {
    for (const instance of ['..', '.hidden', 'a/b', ''])
      expect(() => createEngineVolumes({ docker: unreachable, instance, dir: '/srv/volumes' })).toThrow(TypeError);
  });

  it.each([
    ['data', /absolute/],
    ['/', /root/],
    ['/proc', /runtime's own/],
    ['/sys/fs', /runtime's own/],
    ['/dev/shm', /runtime's own/],
    ['/data/../etc', /"\.\."/],
    ['/data//x', /"\/\/"/],
    ['/data\nx', /control characters/],
  ])('refuses %j as a mount path', (target, message) => {
    expect(mountTargetError(target)).toMatch(message);
  });

  it('refuses a mount path longer than the kernel takes', () => {
    expect(mountTargetError(`/${'a'.repeat(5000)}`)).toMatch(/4096 bytes/);
  });

  it.each(['/data', '/var/lib/postgresql/data', '/data/', '/devices', '/srv/app data'])('mounts at %j', (target) => {
    expect(mountTargetError(target)).toBeUndefined();
  });

  it('keeps volume images under .data unless told where, and only at an absolute, normalised path', () => {
    expect(parseConfig({}).VOLUMES_DIR).toBe(`${process.cwd()}/.data/volumes`);
    expect(parseConfig({ VOLUMES_DIR: '/var/lib/slipway/volumes' }).VOLUMES_DIR).toBe('/var/lib/slipway/volumes');
    for (const bad of ['volumes', '/var/../volumes', '/'])
      expect(() => parseConfig({ VOLUMES_DIR: bad })).toThrow(/^invalid VOLUMES_DIR=.*absolute path/);
  });

  it('names the volume, its size and its org for the Temporal UI', () => {
    const v = volumeWorkflowVisibility(
      { _id: ID, orgId: 'org-1', projectId: null, name: 'pg`data', sizeGb: 2 },
      { name: 'acme' },
    );
    expect(v.staticSummary).toBe('volume pg`data (2 GB) of org acme');
    expect(v.staticDetails).toContain(`Volume \`pgdata\` (\`${ID}\`) of org \`acme\` (\`org-1\`)`);
    expect(v.staticDetails).toContain('Project: none');
    expect(v.typedSearchAttributes).toEqual([{ key: expect.objectContaining({ name: 'OrgId' }), value: 'org-1' }]);
  });
});
