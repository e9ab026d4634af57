import { expect } from 'chai';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { AddressNotAllowedError, checkWebhookUrl, isPublicAddress, publicOnlyLookup } from '../../domain/ssrf-guard.ts';

/** A resolver standing in for DNS (the network is closed to tests); records what it was asked. */
function fakeLookup(table: Record<string, string[]>): ((host: string) => Promise<string[]>) & { asked: string[] } {
  const asked: string[] = [];
  const lookup = (host: string): Promise<string[]> => {
    asked.push(host);
    const answer = table[host];
    if (answer === undefined) {
      return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND', hostname: host }));
    }
    return Promise.resolve(answer);
  };
  return Object.assign(lookup, { asked });
}

const noDns = fakeLookup({});

describe('SSRF guard', () => {
  describe('isPublicAddress', () => {
    const table: Array<[string, boolean, string]> = [
      ['93.184.216.34', true, 'public IPv4'],
      ['8.8.8.8', true, 'public IPv4'],
      ['2606:2800:220:1:248:1893:25c8:1946', true, 'public IPv6'],
      ['::ffff:93.184.216.34', true, 'IPv4-mapped public address'],
      ['127.0.0.1', false, 'loopback'],
      ['127.255.255.254', false, 'loopback /8'],
      ['10.0.0.1', false, 'RFC 1918'],
      ['172.16.5.4', false, 'RFC 1918'],
      ['172.31.255.255', false, 'RFC 1918 upper edge'],
      ['192.168.1.1', false, 'RFC 1918'],
      ['169.254.169.254', false, 'link-local (cloud metadata)'],
      ['100.64.0.1', false, 'CGNAT'],
      ['0.0.0.0', false, 'unspecified'],
      ['0.1.2.3', false, '0.0.0.0/8'],
      ['255.255.255.255', false, 'broadcast'],
      ['224.0.0.1', false, 'multicast'],
      ['240.0.0.1', false, 'reserved'],
      ['192.0.2.10', false, 'documentation TEST-NET-1'],
      ['198.51.100.10', false, 'documentation TEST-NET-2'],
      ['203.0.113.10', false, 'documentation TEST-NET-3'],
      ['198.18.0.1', false, 'benchmarking'],
      ['::1', false, 'IPv6 loopback'],
      ['::', false, 'IPv6 unspecified'],
      ['fe80::1', false, 'IPv6 link-local'],
      ['fe80::1%eth0', false, 'IPv6 link-local with a zone'],
      ['fc00::1', false, 'unique local'],
      ['fd12:3456:789a::1', false, 'unique local'],
      ['ff02::1', false, 'IPv6 multicast'],
      ['2001:db8::1', false, 'IPv6 documentation'],
      ['::ffff:127.0.0.1', false, 'IPv4-mapped loopback'],
      ['::ffff:7f00:1', false, 'IPv4-mapped loopback, hex form'],
      ['::ffff:10.0.0.1', false, 'IPv4-mapped private'],
      ['::ffff:169.254.169.254', false, 'IPv4-mapped link-local'],
      ['::7f00:1', false, 'IPv4-compatible loopback (deprecated form)'],
      ['::127.0.0.1', false, 'IPv4-compatible loopback, dotted'],
      ['::a00:1', false, 'IPv4-compatible private'],
      ['::5db8:d822', false, 'IPv4-compatible public: nothing lives there'],
      ['2002:7f00:1::', false, '6to4 embedding 127.0.0.1'],
      ['2002:a00:1::', false, '6to4 embedding 10.0.0.1'],
      ['64:ff9b::7f00:1', false, 'NAT64 embedding 127.0.0.1'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', false, 'Teredo'],
      ['not an address', false, 'garbage'],
      ['', false, 'empty'],
    ];
    for (const [address, expected, what] of table) {
      it(`${expected ? 'accepts' : 'refuses'} ${address || '(empty)'} (${what})`, () => {
        expect(isPublicAddress(address)).to.equal(expected);
      });
    }
  });

  describe('checkWebhookUrl', () => {
    const refusedUrls: Array<[string, RegExp]> = [
      ['http://127.0.0.1/', /private, loopback or reserved address \(127\.0\.0\.1\)/],
      ['http://127.0.0.1:8080/hooks', /127\.0\.0\.1/],
      ['http://2130706433/', /127\.0\.0\.1/], // decimal
      ['http://0x7f000001/', /127\.0\.0\.1/], // hex
      ['http://0x7f.1/', /127\.0\.0\.1/], // hex, short form
      ['http://017700000001/', /127\.0\.0\.1/], // octal
      ['http://0177.0.0.1/', /127\.0\.0\.1/], // octal first part
      ['http://127.1/', /127\.0\.0\.1/], // short form
      ['http://10.0.0.1/', /10\.0\.0\.1/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254/],
      ['http://0.0.0.0/', /0\.0\.0\.0/],
      ['http://[::1]/', /::1/],
      ['http://[::ffff:127.0.0.1]/', /::ffff:7f00:1/],
      ['http://[::127.0.0.1]/', /::7f00:1/],
      ['http://[fe80::1]/', /fe80::1/],
      ['http://localhost/', /localhost/],
      ['http://LOCALHOST:3000/', /localhost/],
      ['http://localhost./', /localhost/],
      ['http://api.localhost/', /localhost/],
      ['ftp://example.com/', /http or https, not ftp/],
      ['file:///etc/passwd', /http or https, not file/],
      ['javascript:alert(1)', /http or https/],
      ['/relative/path', /absolute http or https URL/],
      ['not a url', /absolute http or https URL/],
      ['http://user:pw@example.com/', /credentials/],
      ['https://token@example.com/', /credentials/],
    ];
    for (const [url, reason] of refusedUrls) {
      it(`refuses ${url}`, async () => {
        const answer = await checkWebhookUrl(url, { allowPrivate: false, lookup: noDns });
        expect(answer).to.be.a('string').and.to.match(reason);
      });
    }

    it('asks no resolver about IP literals or localhost', async () => {
      const lookup = fakeLookup({});
      await checkWebhookUrl('http://2130706433/', { allowPrivate: false, lookup });
      await checkWebhookUrl('http://[::1]/', { allowPrivate: false, lookup });
      await checkWebhookUrl('http://localhost/', { allowPrivate: false, lookup });
      expect(lookup.asked).to.deep.equal([]);
    });

    it('accepts a public IP literal without resolving it', async () => {
      expect(await checkWebhookUrl('https://93.184.216.34/hooks', { allowPrivate: false, lookup: noDns })).to.equal(null);
      expect(await checkWebhookUrl('https://[2606:2800:220:1:248:1893:25c8:1946]/hooks', { allowPrivate: false, lookup: noDns })).to.equal(null);
    });

    it('accepts a host name that resolves only to public addresses', async () => {
      const lookup = fakeLookup({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] });
      expect(await checkWebhookUrl('https://hooks.example.com/dispatch?x=1', { allowPrivate: false, lookup })).to.equal(null);
      expect(lookup.asked).to.deep.equal(['hooks.example.com']);
    });

    it('refuses a host name that resolves to a private address', async () => {
      const lookup = fakeLookup({ 'internal.example.com': ['10.1.2.3'] });
      const answer = await checkWebhookUrl('https://internal.example.com/', { allowPrivate: false, lookup });
      expect(answer).to.match(/internal\.example\.com resolves to a private, loopback or reserved address \(10\.1\.2\.3\)/);
    });

    it('refuses a host name when any one of its addresses is private', async () => {
      const lookup = fakeLookup({ 'mixed.example.com': ['93.184.216.34', '::ffff:127.0.0.1'] });
      const answer = await checkWebhookUrl('https://mixed.example.com/', { allowPrivate: false, lookup });
      expect(answer).to.match(/::ffff:127\.0\.0\.1/);
    });

    it('refuses a host name that does not resolve, and says so', async () => {
      const answer = await checkWebhookUrl('https://nowhere.invalid/', { allowPrivate: false, lookup: noDns });
      expect(answer).to.equal('host nowhere.invalid does not resolve (ENOTFOUND)');
    });

    it('refuses a host name that resolves to nothing', async () => {
      const lookup = fakeLookup({ 'empty.example.com': [] });
      expect(await checkWebhookUrl('https://empty.example.com/', { allowPrivate: false, lookup })).to.equal('host empty.example.com does not resolve');
    });

    it('accepts private, loopback and localhost URLs when private URLs are allowed, without resolving', async () => {
      const lookup = fakeLookup({});
      for (const url of [
        'http://127.0.0.1:4000/hooks',
        'http://2130706433/',
        'http://10.0.0.1/',
        'http://[::1]:8080/',
        'http://localhost:3000/webhooks',
        'http://receiver.internal/',
      ]) {
        expect(await checkWebhookUrl(url, { allowPrivate: true, lookup }), url).to.equal(null);
      }
      expect(lookup.asked).to.deep.equal([]);
    });

    it('still refuses other schemes and credentials when private URLs are allowed', async () => {
      expect(await checkWebhookUrl('ftp://127.0.0.1/', { allowPrivate: true })).to.match(/http or https/);
      expect(await checkWebhookUrl('http://a:b@127.0.0.1/', { allowPrivate: true })).to.match(/credentials/);
    });
  });

  describe('publicOnlyLookup (the delivery-time guard)', () => {
    /** Answers as dns.lookup with `all: true` would, from a table; records the options it was given. */
    function resolver(table: Record<string, string[]>) {
      const asked: LookupOptions[] = [];
      const resolveAll = (host: string, options: LookupOptions): Promise<LookupAddress[]> => {
        asked.push(options);
        const answer = table[host];
        if (answer === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));
        return Promise.resolve(answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
      };
      return Object.assign(resolveAll, { asked });
    }

    /** Runs the lookup as node:net would, answering [error, address, family]. */
    const lookUp = (lookup: ReturnType<typeof publicOnlyLookup>, host: string, options: LookupOptions) =>
      new Promise<[NodeJS.ErrnoException | null, string | LookupAddress[], number?]>((resolve) => lookup(host, options, (...answer) => resolve(answer)));

    for (const address of ['::7f00:1', '::a00:1', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe', '64:ff9b::7f00:1', '127.0.0.1', '::1', '10.1.2.3']) {
      it(`refuses a host that resolves to ${address}`, async () => {
        const [error] = await lookUp(publicOnlyLookup(resolver({ 'rebound.example.com': [address] })), 'rebound.example.com', { all: true });
        expect(error).to.be.an.instanceOf(AddressNotAllowedError);
        expect(error?.message).to.equal(`rebound.example.com resolves to ${address}, which is not a public address`);
      });
    }

    it('refuses a host when any one of its addresses is not public', async () => {
      const [error] = await lookUp(publicOnlyLookup(resolver({ 'mixed.example.com': ['93.184.216.34', '::7f00:1'] })), 'mixed.example.com', { all: true });
      expect(error).to.be.an.instanceOf(AddressNotAllowedError);
    });

    it('answers public addresses in the form asked for: all of them, or the first with its family', async () => {
      const lookup = publicOnlyLookup(resolver({ 'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34'] }));
      const [error, all] = await lookUp(lookup, 'hooks.example.com', { all: true });
      expect(error).to.equal(null);
      expect((all as LookupAddress[]).map((a) => a.address)).to.deep.equal(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34']);
      expect(await lookUp(lookup, 'hooks.example.com', { family: 4 })).to.deep.equal([null, '93.184.216.34', 4]);
    });

    it('passes the resolver the family and hints it was given', async () => {
      const resolveAll = resolver({ 'hooks.example.com': ['93.184.216.34'] });
      await lookUp(publicOnlyLookup(resolveAll), 'hooks.example.com', { family: 4, hints: 32 });
      expect(resolveAll.asked).to.deep.equal([{ family: 4, hints: 32 }]);
    });

    it('passes on a resolver failure, and calls an empty answer one', async () => {
      const [missing] = await lookUp(publicOnlyLookup(resolver({})), 'nowhere.invalid', { all: true });
      expect(missing).to.include({ code: 'ENOTFOUND' });
      const [empty] = await lookUp(publicOnlyLookup(resolver({ 'empty.example.com': [] })), 'empty.example.com', { all: true });
      expect(empty).to.include({ code: 'ENOTFOUND' });
    });
  });
});
