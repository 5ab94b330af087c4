import fs from 'node:fs/promises';
import path from 'node:path';

// The stack's Temporal dev server (the one `npm start` runs, started here by jest's global setup).
describe('the Temporal dev server store', () => {
  it('is SQLite in write-ahead-log mode, so a workflow start or task costs one sync, not several (a deploy.s 202 waits on the start)', async () => {
    const file = path.join(process.env.SLIPWAY_TEST_DATA_DIR!, 'temporal', 'temporal.db');
    const header = Buffer.alloc(20);
    const handle = await fs.open(file, 'r');
    try {
      await handle.read(header, 0, header.length, 0);
    } finally {
      await handle.close();
    }
    expect(header.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    // Bytes 18 and 19 are the file format's write and read versions: 2 in WAL mode, 1 with a rollback journal.
    expect([header[18], header[19]]).toEqual([2, 2]);
  });
});
