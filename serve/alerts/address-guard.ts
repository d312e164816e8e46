// Which addresses a webhook may reach (docs/api.md, "Alerts"): a key holder must not be able to
// make the server probe its own network, so only public unicast addresses are allowed unless
// ALERTS_ALLOW_PRIVATE=1. The check is made on the address the connection actually uses (the
// lookup below goes into the HTTP request; an IP literal, which never goes through a lookup, is
// checked by literalRefusal before each attempt), not only on the URL at creation: a name that
// resolves to a public address when the watch is made and to 127.0.0.1 later (DNS rebinding), or a
// literal accepted while ALERTS_ALLOW_PRIVATE was set, is refused at delivery. ipaddr.js classifies the ranges (IANA special-purpose registries).
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

export class RefusedAddress extends Error {}

/** True for a public unicast address; false for loopback, private, link-local, CGNAT, multicast, reserved, ... */
function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  // ::ffff:127.0.0.1 is 127.0.0.1.
  return ipaddr.process(ip).range() === 'unicast';
}

/** A webhook URL's shape: http(s), a host, no credentials. Null when it is fine, else why not. */
export function urlProblem(raw: string): string | null {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return 'url must be an absolute http(s) URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'url must be an http or https URL';
  if (!u.hostname) return 'url must name a host';
  if (u.username || u.password) return 'url must not carry a user name or password';
  return null;
}

/** The addresses `host` resolves to (an IP literal is itself). */
async function addressesOf(host: string): Promise<string[]> {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (ipaddr.isValid(bare)) return [bare];
  return (await dns.promises.lookup(bare, { all: true })).map((a) => a.address);
}

/**
 * At creation: the URL's shape, and (unless private addresses are allowed) every address its host
 * resolves to must be public. Null when allowed, else the reason for the client.
 */
export async function webhookUrlRefusal(raw: string, allowPrivate: boolean): Promise<string | null> {
  const shape = urlProblem(raw);
  if (shape || allowPrivate) return shape;
  const host = new URL(raw).hostname;
  let addresses: string[];
  try {
    addresses = await addressesOf(host);
  } catch {
    return `url's host ${host} does not resolve`;
  }
  const closed = addresses.find((a) => !isPublicAddress(a));
  return closed
    ? `url's host ${host} is ${closed}, a loopback or private address: webhooks go to public addresses only (the operator may set ALERTS_ALLOW_PRIVATE=1)`
    : null;
}

/**
 * An IP-literal host checked before connecting (null: allowed, or not a literal). Node calls the
 * lookup hook below only for names: a literal (127.0.0.1, [::1], [::ffff:10.0.0.1], 169.254.169.254)
 * goes straight to connect, so it is checked here, by the sender, on every attempt.
 */
export function literalRefusal(host: string, allowPrivate: boolean): RefusedAddress | null {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  if (allowPrivate || !ipaddr.isValid(bare) || isPublicAddress(bare)) return null;
  return new RefusedAddress(`${bare} is not a public address`);
}

/** A dns.lookup for http.request that refuses non-public addresses (unless allowed): checked at connect. */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as dns.LookupAddress[];
      const usable = allowPrivate ? list : list.filter((a) => isPublicAddress(a.address));
      if (usable.length === 0)
        return callback(new RefusedAddress(`${hostname} resolves to no public address (${list.map((a) => a.address).join(', ')})`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, usable);
      callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
}
