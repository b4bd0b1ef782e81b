import { request } from 'node:http';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedLookup, isPublicAddress, OutboundRefusedError, resolveAllowedAddress } from '../../server/net/outbound';

describe('outbound destinations', () => {
  it('knows public from loopback, private, link-local and special addresses', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) expect(isPublicAddress(a)).toBe(true);
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '100.64.0.1', '::1', 'fe80::1', 'fc00::1', '::ffff:127.0.0.1', '224.0.0.1', 'not-an-ip']) {
      expect(isPublicAddress(a)).toBe(false);
    }
  });

  it('refuses a name or address that resolves to loopback unless private hosts are allowed', async () => {
    await expect(resolveAllowedAddress('localhost', { allowPrivate: false })).rejects.toBeInstanceOf(OutboundRefusedError);
    await expect(resolveAllowedAddress('127.0.0.1', { allowPrivate: false })).rejects.toThrow(/127\.0\.0\.1/);
    await expect(resolveAllowedAddress('169.254.169.254', { allowPrivate: false })).rejects.toBeInstanceOf(OutboundRefusedError);
    expect(await resolveAllowedAddress('127.0.0.1', { allowPrivate: true })).toBe('127.0.0.1');
  });

  describe('guarded lookup for HTTP', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((_req, res) => res.end('reached'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    const get = (allowPrivate: boolean) =>
      new Promise<string>((resolve, reject) => {
        const req = request({ host: 'localhost', port, family: 4, lookup: guardedLookup({ allowPrivate }) }, (res) => {
          let body = '';
          res.on('data', (c) => (body += c));
          res.on('end', () => resolve(body));
        });
        req.on('error', reject);
        req.end();
      });

    it('blocks the connection to a private destination and allows it when configured', async () => {
      await expect(get(false)).rejects.toBeInstanceOf(OutboundRefusedError);
      expect(await get(true)).toBe('reached');
    });
  });
});
