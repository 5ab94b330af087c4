import { instanceId } from '@shared/instance';

const cfg = {
  SLIPWAY_INSTANCE: undefined,
  MONGODB_URL: 'mongodb://127.0.0.1:27017',
  MONGODB_DB: 'slipway',
  TEMPORAL_TASK_QUEUE: 'deployments',
};

describe('instance label', () => {
  it('is the configured one when set', () => {
    expect(instanceId({ ...cfg, SLIPWAY_INSTANCE: 'prod-1' })).toBe('prod-1');
  });

  it('names the database and a hash of its server, database and task queue', () => {
    expect(instanceId(cfg)).toMatch(/^slipway-[0-9a-f]{16}$/);
    expect(instanceId(cfg)).toBe(instanceId({ ...cfg }));
    const others = [
      { ...cfg, MONGODB_URL: 'mongodb://127.0.0.1:27018' },
      { ...cfg, MONGODB_DB: 'slipway_test' },
      { ...cfg, TEMPORAL_TASK_QUEUE: 'deployments-test-1' },
    ].map(instanceId);
    expect(new Set([instanceId(cfg), ...others]).size).toBe(4);
  });

  it('leaves the credentials, options and scheme of the URL out, so a rotated password keeps the label', () => {
    const id = instanceId(cfg);
    expect(instanceId({ ...cfg, MONGODB_URL: 'mongodb://user:s3cret@127.0.0.1:27017' })).toBe(id);
    expect(instanceId({ ...cfg, MONGODB_URL: 'mongodb://other:p%40ss@127.0.0.1:27017/admin?tls=false' })).toBe(id);
    expect(instanceId({ ...cfg, MONGODB_URL: 'mongodb+srv://u:p@127.0.0.1:27017' })).toBe(id);
    expect(instanceId({ ...cfg, MONGODB_URL: 'mongodb://u:s3cret@127.0.0.1:27017' })).not.toContain('s3cret');
  });

  it('is a valid label value for any database name', () => {
    const id = instanceId({ ...cfg, MONGODB_DB: `my db/${'x'.repeat(80)}` });
    expect(id).toMatch(/^my_db_x{34}-[0-9a-f]{16}$/);
  });
});
