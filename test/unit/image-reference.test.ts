import { unsafeEnginePath } from '@shared/engine/docker-client';
import { formatImageReference, parseImageReference } from '@shared/images/reference';

const normalised = (text: string) => formatImageReference(parseImageReference(text));

describe('image references (distribution grammar, normalised like docker)', () => {
  it.each([
    ['busybox', 'docker.io/library/busybox:latest'],
    ['busybox:1.37', 'docker.io/library/busybox:1.37'],
    ['library/busybox', 'docker.io/library/busybox:latest'],
    ['index.docker.io/busybox', 'docker.io/library/busybox:latest'],
    ['docker.io/slipway-test/hello', 'docker.io/slipway-test/hello:latest'],
    ['slipway/0f5e3c1a-2b3c-4d5e-8f90-123456789abc:1', 'docker.io/slipway/0f5e3c1a-2b3c-4d5e-8f90-123456789abc:1'],
    ['localhost/app', 'localhost/app:latest'],
    ['127.0.0.1:5000/team/app:2', '127.0.0.1:5000/team/app:2'],
    ['registry.example.com/a__b/c-d.e:v1.2_3', 'registry.example.com/a__b/c-d.e:v1.2_3'],
    ['[::1]:5000/app', '[::1]:5000/app:latest'],
    [`app@sha256:${'a'.repeat(64)}`, `docker.io/library/app@sha256:${'a'.repeat(64)}`],
    [`app:1@sha256:${'b'.repeat(64)}`, `docker.io/library/app:1@sha256:${'b'.repeat(64)}`],
    ['cafe:1', 'docker.io/library/cafe:1'],
  ])('%s is %s', (text, expected) => {
    expect(normalised(text)).toBe(expected);
  });

  it.each([
    ['../../../etc/passwd', /is not a valid image reference: ".." is not a registry host/],
    ['', /it is empty/],
    ['Busybox', /a repository name is lowercase/],
    ['busybox:', /a tag is 1 to 128/],
    ['busybox:-x', /a tag is 1 to 128/],
    ['busybox@sha256:abc', /must be a digest/],
    ['a//b', /a repository name/],
    ['a/./b', /a repository name/],
    ['app?x=1', /a repository name/],
    ['app#frag', /a repository name/],
    ['app name', /a repository name/],
    ['ex ample.com/app', /is not a registry host/],
    ['-bad.example.com:5000/app', /is not a registry host/],
    ['registry.example.com:x/app', /is not a registry host/],
    ['251e96e5', /image IDs and ID prefixes are not accepted/],
    ['25', /image IDs and ID prefixes are not accepted/],
    [`sha256:${'c'.repeat(64)}`, /image IDs and ID prefixes are not accepted/],
    ['sha256:251e96e5', /image IDs and ID prefixes are not accepted/],
    ['c'.repeat(64), /image IDs and ID prefixes are not accepted/],
    [`${'c'.repeat(64)}:1`, /image IDs and ID prefixes are not accepted/],
    [`${'a'.repeat(256)}`, /longer than 255/],
  ])('%s is refused', (text, message) => {
    expect(() => parseImageReference(text)).toThrow(message);
  });

  it('parses into registry host, path, tag and digest', () => {
    expect(parseImageReference('127.0.0.1:5000/team/app:2')).toEqual({
      registryHost: '127.0.0.1:5000',
      path: 'team/app',
      tag: '2',
    });
    expect(parseImageReference(`app@sha256:${'a'.repeat(64)}`)).toEqual({
      registryHost: 'docker.io',
      path: 'library/app',
      digest: `sha256:${'a'.repeat(64)}`,
    });
  });
});

describe('engine request paths', () => {
  it.each([
    ['/images/docker.io/library/busybox:latest/json', undefined],
    ['/images/sha256:abc/json', undefined],
    ['/containers/create?', undefined],
    ['/images/[::1]:5000/app:latest/json', undefined],
    ['/images/../../../etc/passwd/json', /"\." or "\.\." path segment/],
    ['/images/./x/json', /"\." or "\.\." path segment/],
    ['/images//evil.example/json', /empty path segment/],
    ['/images/x?y/json', /characters outside/],
    ['/images/x%2e%2e/json', /characters outside/],
  ])('%s', (path, reason) => {
    const got = unsafeEnginePath(path);
    if (reason) expect(got).toMatch(reason);
    else expect(got).toBeUndefined();
  });
});
