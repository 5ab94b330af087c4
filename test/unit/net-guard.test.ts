import { isPrivateAddress, privateTargetReason } from '../../shared/net-guard';

describe('outbound target guard', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it('resolves names before judging them', async () => {
    expect(await privateTargetReason(new URL('http://localhost:8080/hook'))).toMatch(/resolves to (127\.0\.0\.1|::1)/);
    expect(await privateTargetReason(new URL('http://[::ffff:127.0.0.1]/'))).toMatch(/::ffff:7f00:1, a loopback/);
    expect(await privateTargetReason(new URL('https://203.0.113.9/'))).toBeUndefined();
  });
});
