// --node-address-exclude-cidrs: addresses of networks that must never be a node's address (a
// storage or backup network, say), taken out of the cloud's list before KEP-3705's selection.
// Kubernetes has no such filter (cloud-provider#56): without an annotation every cloud address is
// kept, and components that read the first InternalIP may pick the wrong network.
import ipaddr from 'ipaddr.js';
import { parseIPSloppy } from './ip.js';
import type { NodeAddress } from '../model/node-address.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** A cloud address the exclusion took out, with the CIDR that matched it. */
export interface ExcludedAddress extends NodeAddress {
  /** Position in the cloud's list. */
  cloudIndex: number;
  cidr: string;
}

export class AddressExclusion {
  readonly #ranges: { text: string; range: Range }[];

  /** Parses a comma-separated CIDR list of either family; throws naming the bad entry. */
  static parse(list: string): AddressExclusion {
    const entries = list.split(',').map((s) => s.trim());
    if (entries.some((e) => e === '')) throw new Error(`an empty entry in "${list}"; expected CIDRs separated by commas`);
    return new AddressExclusion(entries.map((text) => {
      let range: Range;
      try {
        range = ipaddr.parseCIDR(text);
      } catch {
        throw new Error(`"${text}" is not a CIDR (e.g. 192.168.50.0/24 or fd00:50::/64)`);
      }
      // Written as its network (10.1.2.3/16 → 10.1.0.0/16), as Go's net.ParseCIDR reports it.
      const network = range[0].kind() === 'ipv4' ? ipaddr.IPv4.networkAddressFromCIDR(text) : ipaddr.IPv6.networkAddressFromCIDR(text);
      return { text: `${network.toString()}/${range[1]}`, range };
    }));
  }

  private constructor(ranges: { text: string; range: Range }[]) {
    this.#ranges = ranges;
  }

  /** The CIDRs, canonical. */
  get cidrs(): string[] {
    return this.#ranges.map((r) => r.text);
  }

  /** The excluded CIDR an IP lies in (IPv4 in IPv4 ranges, IPv6 in IPv6 ranges), if any. */
  cidrOf(ip: string): string | undefined {
    const parsed = parseIPSloppy(ip);
    if (!parsed) return undefined;
    const addr = ipaddr.parse(parsed.canonical);
    return this.#ranges.find(({ range }) => range[0].kind() === addr.kind() && addr.match(range))?.text;
  }

  /** The cloud's list without excluded addresses (names such as Hostname entries are never IPs, so always kept). */
  split(cloud: readonly NodeAddress[]): { kept: NodeAddress[]; excluded: ExcludedAddress[] } {
    const kept: NodeAddress[] = [];
    const excluded: ExcludedAddress[] = [];
    cloud.forEach((a, cloudIndex) => {
      const cidr = this.cidrOf(a.address);
      if (cidr === undefined) kept.push(a);
      else excluded.push({ type: a.type, address: a.address, cloudIndex, cidr });
    });
    return { kept, excluded };
  }
}
