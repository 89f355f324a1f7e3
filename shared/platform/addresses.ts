// Which network addresses a webhook may be delivered to: public unicast only. Loopback, private,
// link-local, unique-local, carrier-grade NAT, multicast, reserved and documentation ranges are
// refused, in whatever form they are written: an IPv4 address carried in IPv6 (IPv4-mapped
// ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d,
// 6to4 2002:AABB:CCDD::) is judged as that IPv4 address, and prefixes whose IPv4 address cannot
// be read back (Teredo 2001::/32, local-use NAT64 64:ff9b:1::/48) are refused whole. Outside
// those, IPv6 is public only inside global unicast (2000::/3).
// Also: whether a URL's host is a loopback address, which makes an instance a development one;
// and the key of a client address for per-client bounds.
import { BlockList, isIP } from 'node:net';

const refusedIpv4 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  refusedIpv4.addSubnet(net, prefix, 'ipv4');
}

/** Inside global unicast (2000::/3): ranges that are not someone's public host. */
const refusedIpv6 = new BlockList();
for (const [net, prefix] of [
  ['2001::', 32], // Teredo: its IPv4 address is obfuscated; refused whole
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID
  ['2001:20::', 28], // ORCHIDv2
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
] as const) {
  refusedIpv6.addSubnet(net, prefix, 'ipv6');
}

/** The 16 bytes of an IPv6 address (a zone index is ignored), or undefined when it is not one. */
export function ipv6Bytes(text: string): Uint8Array | undefined {
  const address = text.replace(/%.*$/, '');
  if (isIP(address) !== 6) return undefined;
  let tail: number[] = [];
  let rest = address;
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    tail = dotted[2]!.split('.').map(Number);
    rest = `${dotted[1]}0:0`;
  }
  const [head = '', after] = rest.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = after === undefined ? [] : groups(after);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = new Uint8Array(16);
  words.forEach((w, i) => {
    bytes[2 * i] = w >> 8;
    bytes[2 * i + 1] = w & 255;
  });
  if (dotted) bytes.set(tail, 12);
  return bytes;
}

const zeros = (bytes: Uint8Array, from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);
const dottedQuad = (bytes: Uint8Array, at: number) => [...bytes.subarray(at, at + 4)].join('.');

/**
 * How an IPv6 address is judged: as the IPv4 address it carries, refused whole (a prefix whose
 * IPv4 address cannot be read back, or that is not global unicast), or as itself.
 */
function ipv6Verdict(bytes: Uint8Array): { ipv4: string } | 'refused' | 'itself' {
  // ::a.b.c.d (IPv4-compatible; :: and ::1 are 0.0.0.0 and 0.0.0.1, refused as such) and
  // ::ffff:a.b.c.d (IPv4-mapped).
  if (zeros(bytes, 0, 10) && ((bytes[10] === 0 && bytes[11] === 0) || (bytes[10] === 0xff && bytes[11] === 0xff))) return { ipv4: dottedQuad(bytes, 12) };
  // ::ffff:0:a.b.c.d (SIIT).
  if (zeros(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0) return { ipv4: dottedQuad(bytes, 12) };
  // 64:ff9b::/32: the well-known NAT64 prefix 64:ff9b::/96 carries an IPv4 address; the rest
  // (the local-use 64:ff9b:1::/48 among it) translates to addresses nobody outside can judge.
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b) return zeros(bytes, 4, 12) ? { ipv4: dottedQuad(bytes, 12) } : 'refused';
  // 2002::/16 (6to4): the IPv4 address is the next 32 bits.
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { ipv4: dottedQuad(bytes, 2) };
  // Outside global unicast: loopback, unspecified, unique-local, link-local, site-local, multicast, reserved.
  if ((bytes[0]! & 0xe0) !== 0x20) return 'refused';
  return 'itself';
}

/** Whether a delivery may go to this IP address (a literal, as written or as resolved). */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip.replace(/%.*$/, ''));
  if (family === 0) return false;
  if (family === 4) return !refusedIpv4.check(ip, 'ipv4');
  const bytes = ipv6Bytes(ip)!;
  const verdict = ipv6Verdict(bytes);
  if (verdict === 'refused') return false;
  if (verdict !== 'itself') return isPublicAddress(verdict.ipv4);
  return !refusedIpv6.check(ip.replace(/%.*$/, ''), 'ipv6');
}

/** A URL host (brackets allowed) that names this machine: localhost, *.localhost, 127.0.0.0/8 or ::1 in any form. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  const bytes = ipv6Bytes(host);
  if (!bytes) return false;
  if (zeros(bytes, 0, 15) && bytes[15] === 1) return true;
  const verdict = ipv6Verdict(bytes);
  return typeof verdict === 'object' && verdict.ipv4.startsWith('127.');
}

/**
 * The client a request came from, as a key for per-client bounds (sign-in throttling, the fair
 * queue of password checks): an IPv4 address as written (also when it came IPv4-mapped); an IPv6
 * address by its /64, which one subscriber usually holds whole.
 */
export function clientKeyOf(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const bare = ip.replace(/%.*$/, '');
  if (isIP(bare) === 4) return bare;
  const bytes = ipv6Bytes(bare);
  if (!bytes) return 'unknown';
  if (zeros(bytes, 0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return dottedQuad(bytes, 12);
  const words = Array.from({ length: 4 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  return `${words.join(':')}::/64`;
}
