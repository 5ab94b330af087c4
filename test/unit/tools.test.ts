import { compareVersions, goDirective } from '@scripts/stack/go';

describe('Go toolchain version checks', () => {
  it.each([
    ['1.26.8', '1.25.0', 1],
    ['1.25.0', '1.25', 0],
    ['1.24.3', '1.25.0', -1],
    ['1.9', '1.19', -1],
  ])('compares %s with %s field by field', (a, b, sign) => {
    expect(Math.sign(compareVersions(a, b))).toBe(sign);
  });

  it("reads the go directive of a go.mod, not the toolchain line or a dependency's version", () => {
    const mod = 'module example.com/x\n\ngo 1.24.0\n\ntoolchain go1.24.8\n\nrequire golang.org/x/sys v0.30.0\n';
    expect(goDirective(mod)).toBe('1.24.0');
    expect(goDirective('module example.com/y\n')).toBeUndefined();
  });
});
