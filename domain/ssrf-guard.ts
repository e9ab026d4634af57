// The guard against webhook URLs that point inside the operator's network (server-side request
// forgery), in two places that apply one rule, isPublicAddress. At creation, checkWebhookUrl
// refuses a bad URL early, with a reason the customer can act on; it is advisory, because DNS can
// change between creation and delivery. At delivery, publicOnlyLookup and the IP-literal check in
// jobs/webhook-post.ts judge the addresses actually connected to.
import type { LookupAddress, LookupOptions } from 'node:dns';
import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

// IPv4-compatible IPv6 (::a.b.c.d, deprecated by RFC 4291) is 'unicast' to ipaddr.js (and so to
// request-filtering-agent, which let it through at delivery); nothing public lives there, so
// refuse the whole /96.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * True only for a globally routable unicast address. ipaddr.js names every special range
 * (loopback, private, linkLocal, carrierGradeNat, unspecified, broadcast, multicast,
 * reserved and documentation, uniqueLocal, 6to4, teredo, NAT64 rfc6052, ...) and calls the
 * rest 'unicast'. Anything that does not parse is not public.
 */
export function isPublicAddress(address: string): boolean {
  let parsed: ReturnType<typeof ipaddr.parse>;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as InstanceType<typeof ipaddr.IPv6>;
    // ::ffff:a.b.c.d reaches a.b.c.d: judge the IPv4 address it carries.
    if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === 'unicast';
    if (v6.match(IPV4_COMPATIBLE)) return false;
  }
  // 6to4 (2002::/16), Teredo (2001::/32) and NAT64 (64:ff9b::/96) are not 'unicast' to
  // ipaddr.js, so they are refused whatever IPv4 address they embed: stricter than needed.
  return parsed.range() === 'unicast';
}

export interface WebhookUrlCheckOptions {
  allowPrivate: boolean;
  /** Resolves a host name to its addresses; defaults to the system resolver. */
  lookup?: (host: string) => Promise<string[]>;
}

async function systemLookup(host: string): Promise<string[]> {
  const answers = await dns.lookup(host, { all: true });
  return answers.map((answer) => answer.address);
}

function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  // RFC 6761: localhost and every name under it are loopback, whatever DNS says.
  return name === 'localhost' || name.endsWith('.localhost');
}

/** null when the URL may be used as a webhook endpoint, else the reason it may not. */
export async function checkWebhookUrl(url: string, options: WebhookUrlCheckOptions): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute http or https URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return `must use http or https, not ${parsed.protocol.replace(/:$/, '')}`;
  }
  if (parsed.username !== '' || parsed.password !== '') {
    return 'must not carry credentials (user:password@); authenticate deliveries with the signature instead';
  }
  if (parsed.hostname === '') return 'must name a host';
  if (options.allowPrivate) return null;

  // The WHATWG parser has already turned decimal, hex and octal IPv4 forms
  // (http://2130706433/, http://0x7f.1/) into dotted quads; IPv6 literals keep brackets.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host) !== 0) {
    return isPublicAddress(host) ? null : `must not point to a private, loopback or reserved address (${host})`;
  }
  if (isLocalhostName(host)) return 'must not point to localhost';

  let addresses: string[];
  try {
    addresses = await (options.lookup ?? systemLookup)(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return `host ${host} does not resolve${code ? ` (${code})` : ''}`;
  }
  if (addresses.length === 0) return `host ${host} does not resolve`;
  const refused = addresses.find((address) => !isPublicAddress(address));
  if (refused !== undefined) {
    return `host ${host} resolves to a private, loopback or reserved address (${refused})`;
  }
  return null;
}

/** A connection refused because the host it would reach is not public. */
export class AddressNotAllowedError extends Error {
  override name = 'AddressNotAllowedError';
}

/** Every address of a host, as `dns.lookup` with `all: true` answers. */
export type ResolveAll = (host: string, options: LookupOptions) => Promise<LookupAddress[]>;

const systemResolveAll: ResolveAll = (host, options) => dns.lookup(host, { ...options, all: true });

/**
 * A `lookup` for node:net (as the `lookup` option of http.request) that fails with
 * AddressNotAllowedError when any address of the host is not public, so that nothing is
 * connected to. A host that is an IP literal is never looked up: judge it with isPublicAddress.
 */
export function publicOnlyLookup(resolveAll: ResolveAll = systemResolveAll): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, options).then(
      (addresses) => {
        const refused = addresses.find((candidate) => !isPublicAddress(candidate.address));
        if (refused !== undefined) {
          callback(new AddressNotAllowedError(`${hostname} resolves to ${refused.address}, which is not a public address`), []);
        } else if (addresses.length === 0) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', hostname }), []);
        } else if (options.all) {
          callback(null, addresses);
        } else {
          callback(null, addresses[0].address, addresses[0].family);
        }
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
