import { derivedUuid } from '@shared/builder/ids';

const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('derived UUIDs', () => {
  it('are version 8, variant RFC 9562, whatever the parts', () => {
    for (const parts of [[], [''], ['turn-1'], ['session', 'key', 'é'], ['x'.repeat(10_000)]]) {
      expect(derivedUuid(...parts)).toMatch(UUID_V8);
    }
  });

  it('name the same thing for the same parts, so a retried turn writes the same records', () => {
    expect(derivedUuid('turn-1', 'message')).toBe(derivedUuid('turn-1', 'message'));
    expect(derivedUuid('turn-1', 'message')).not.toBe(derivedUuid('turn-1', 'checkpoint'));
    expect(derivedUuid('turn-1')).not.toBe(derivedUuid('turn-2'));
  });

  it('keep the parts apart: moving a boundary names another thing', () => {
    expect(derivedUuid('ab', 'c')).not.toBe(derivedUuid('a', 'bc'));
    expect(derivedUuid('a', 'b')).not.toBe(derivedUuid('ab'));
  });

  it('use the hash for every bit but the version and variant', () => {
    // sha256("") = e3b0c442 98fc 1c14 9afb f4c8 996f b924 27ae 41e4 649b 934c a495 991b 7852 b855
    expect(derivedUuid('')).toBe('e3b0c442-98fc-8c14-9afb-f4c8996fb924');
  });
});
