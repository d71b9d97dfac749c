// IP and CIDR checks for what a cloud hands in (the static cloud-config, the answers of adapters
// loaded at run time), with canonical output (IPv4 dotted quad, IPv6 lower-case compressed).
// Stricter than src/nodeip's ParseIPSloppy, which must take whatever the API server stored: these
// come from outside for this controller, so "010.0.0.1" (octal to some tools, decimal to
// Kubernetes) is refused rather than guessed.
import ipaddr from 'ipaddr.js';

/** The canonical text of `text` if it is an IP address, else undefined. */
export function canonicalIP(text: string): string | undefined {
  if (typeof text !== 'string' || text.length === 0) return undefined;
  if (ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text).toString();
  // Zone suffixes (fe80::1%eth0) are link-local scopes, not node addresses.
  if (text.includes('%') || !text.includes(':') || !ipaddr.IPv6.isValid(text)) return undefined;
  const v6 = ipaddr.IPv6.parse(text);
  // Go (and so Kubernetes) prints IPv4-mapped IPv6 addresses as plain IPv4.
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : v6.toString();
}

/** The canonical text of a CIDR, or an explanation of why it is not one. */
export function canonicalCIDR(text: string): { cidr: string } | { problem: string } {
  if (typeof text !== 'string') return { problem: 'not a string' };
  const slash = text.indexOf('/');
  if (slash < 0) return { problem: 'missing "/prefix-length"' };
  const ipText = text.slice(0, slash);
  const lenText = text.slice(slash + 1);
  const ip = canonicalIP(ipText);
  if (!ip) return { problem: `"${ipText}" is not an IP address` };
  const max = ip.includes(':') ? 128 : 32;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(lenText) || Number(lenText) > max) {
    return { problem: `prefix length "${lenText}" is not in 0..${max}` };
  }
  const len = Number(lenText);
  const parsed = ipaddr.parse(ip);
  const network = ipaddr.parse(
    parsed.kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(`${ip}/${len}`).toString() : ipaddr.IPv6.networkAddressFromCIDR(`${ip}/${len}`).toString(),
  );
  if (network.toString() !== ip) return { problem: `host bits are set (network address is ${network.toString()}/${len})` };
  return { cidr: `${ip}/${len}` };
}
