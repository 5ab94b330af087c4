import { ConfigError, parseConfig } from '@shared/config';

describe('config', () => {
  it('defaults to the embedded local stack', () => {
    const cfg = parseConfig({});
    expect(cfg).toMatchObject({
      PORT: 3000,
      MONGODB_URL: 'mongodb://127.0.0.1:27017/slipway',
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
    });
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it('coerces numbers and booleans from strings', () => {
    expect(parseConfig({ PORT: '8081', TEMPORAL_TLS: 'true' })).toMatchObject({ PORT: 8081, TEMPORAL_TLS: true });
  });

  it("keeps the router's upstreams in files under .data unless told where, or told off", () => {
    expect(parseConfig({}).EDGE_UPSTREAMS_DIR).toBe(`${process.cwd()}/.data/caddy/upstreams`);
    expect(parseConfig({ EDGE_UPSTREAMS_DIR: '/srv/up/' }).EDGE_UPSTREAMS_DIR).toBe('/srv/up/');
    expect(parseConfig({ EDGE_UPSTREAMS_DIR: 'off' }).EDGE_UPSTREAMS_DIR).toBeUndefined();
    expect(parseConfig({ EDGE_UPSTREAMS_DIR: '' }).EDGE_UPSTREAMS_DIR).toBeUndefined();
  });

  it.each([
    ['EDGE_UPSTREAMS_DIR', 'up', /^invalid EDGE_UPSTREAMS_DIR="up": .*absolute path.*, or off$/],
    ['PORT', 'eighty', /^invalid PORT="eighty": /],
    ['MONGODB_URL', 'postgres://x', /^invalid MONGODB_URL="postgres:\/\/x": .*mongodb:\/\//],
    ['TEMPORAL_ADDRESS', 'localhost', /^invalid TEMPORAL_ADDRESS="localhost": host:port/],
    ['DOCKER_HOST', '/var/run/docker.sock', /^invalid DOCKER_HOST=.*unix:\/\/\/path/],
  ])('refuses a bad %s with one line naming it', (name, value, message) => {
    expect(() => parseConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => parseConfig({ [name]: value })).toThrow(message);
  });
});

describe('TRUST_PROXY', () => {
  it('takes addresses, CIDRs and the named ranges, comma-separated', () => {
    expect(parseConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8,192.0.2.7' }).TRUST_PROXY).toBe(
      'loopback, 10.0.0.0/8,fd00::/8,192.0.2.7',
    );
    expect(parseConfig({}).TRUST_PROXY).toBeUndefined();
  });

  it.each(['true', '1', 'caddy', '10.0.0.0/33', '10.0.0.0/8/1', 'loopback,'])(
    'refuses %s, saying what it takes',
    (v) => {
      expect(() => parseConfig({ TRUST_PROXY: v })).toThrow(/invalid TRUST_PROXY=.*addresses or CIDRs/);
    },
  );
});
