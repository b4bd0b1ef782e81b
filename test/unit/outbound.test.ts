import { isPublicAddress, OutboundRefusedError, resolveAllowedAddress } from '../../server/net/outbound';

describe('outbound destinations', () => {
  it('knows public from loopback, private, link-local and special addresses', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(isPublicAddress(a)).toBe(true);
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '100.64.0.1',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::7f00:1',
      '::a00:1',
      '224.0.0.1',
      'not-an-ip',
    ]) {
      expect(isPublicAddress(a)).toBe(false);
    }
  });

  it('refuses a name or address that resolves to loopback unless private hosts are allowed', async () => {
    await expect(resolveAllowedAddress('localhost', { allowPrivate: false })).rejects.toBeInstanceOf(
      OutboundRefusedError,
    );
    await expect(resolveAllowedAddress('127.0.0.1', { allowPrivate: false })).rejects.toThrow(/127\.0\.0\.1/);
    await expect(resolveAllowedAddress('169.254.169.254', { allowPrivate: false })).rejects.toBeInstanceOf(
      OutboundRefusedError,
    );
    expect(await resolveAllowedAddress('127.0.0.1', { allowPrivate: true })).toBe('127.0.0.1');
  });

  it('refuses an IP literal in every form a URL or a host setting can carry', async () => {
    for (const url of [
      'http://127.0.0.1/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://017700000001/',
      'http://127.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::127.0.0.1]/',
      'http://[::1]/',
      'http://[0:0:0:0:0:ffff:a00:1]/',
      'http://0/',
    ]) {
      await expect(resolveAllowedAddress(new URL(url).hostname, { allowPrivate: false })).rejects.toBeInstanceOf(
        OutboundRefusedError,
      );
    }
    for (const host of ['[::127.0.0.1]', '::ffff:10.0.0.1', '::7f00:1', '2130706433']) {
      await expect(resolveAllowedAddress(host, { allowPrivate: false })).rejects.toBeInstanceOf(OutboundRefusedError);
    }
    expect(await resolveAllowedAddress('[::ffff:127.0.0.1]', { allowPrivate: true })).toBe('127.0.0.1');
  });
});
