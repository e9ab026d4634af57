import type { Request } from 'express';

/** `::ffff:203.0.113.7` is the IPv4 peer 203.0.113.7 seen through a dual-stack socket. */
export function normalizeIp(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped ? mapped[1] : address;
}

/**
 * The caller's address. Behind a proxy (TRUST_PROXY=true) it is the right-most X-Forwarded-For
 * entry: the one the trusted proxy appended, which a client cannot forge by sending the header.
 */
export function clientIp(req: Request, trustProxy: boolean): string {
  const forwarded = trustProxy ? req.headers['x-forwarded-for'] : undefined;
  if (typeof forwarded === 'string' && forwarded.trim() !== '') {
    const hops = forwarded
      .split(',')
      .map((hop) => hop.trim())
      .filter(Boolean);
    if (hops.length > 0) return normalizeIp(hops[hops.length - 1]);
  }
  return normalizeIp(req.socket.remoteAddress ?? '');
}
