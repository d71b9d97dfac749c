// Invariants of the azure address selection over random VMs (NICs, IP configurations of both
// families, public IPs allocated or not). With nodeIPConfigurations all: every private address of
// a listed family is reported once as InternalIP, every allocated public IP of a listed family once
// as ExternalIP. With primary (the default): exactly the primary NIC's primary configuration and,
// per other listed family, that NIC's first configuration of the family, with their public IPs.
// Either way the one Hostname sits between them, families come in the configured order, and the
// primary configuration of the primary NIC leads its family.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { azureNodeAddresses, type AzureNetworkInterface, type AzurePublicIP } from '../../../providers/azure/addresses.js';
import type { IPFamily } from '../../../src/nodeip/ip.js';

interface Config { v6: boolean; primary: boolean; pip: 'none' | 'unallocated' | 'allocated' }
interface Nic { primary: boolean; configs: Config[] }

const config = fc.record({ v6: fc.boolean(), primary: fc.constant(false), pip: fc.constantFrom('none', 'unallocated', 'allocated') as fc.Arbitrary<Config['pip']> });
// One primary configuration per NIC and one primary NIC, as ARM enforces (Azure makes the primary configuration IPv4).
const nic = fc.array(config, { minLength: 1, maxLength: 4 }).chain((configs) =>
  fc.nat({ max: configs.length - 1 }).map((p) => ({ primary: false, configs: configs.map((c, i) => (i === p ? { ...c, primary: true, v6: false } : c)) })));
const vm = fc.array(nic, { minLength: 1, maxLength: 3 }).chain((nics) => fc.nat({ max: nics.length - 1 }).map((p) => nics.map((n, i) => ({ ...n, primary: i === p }))));
const families = fc.constantFrom<IPFamily[]>([4], [6], [4, 6], [6, 4]);

function build(nics: Nic[]) {
  let n = 0;
  const interfaces = new Map<string, AzureNetworkInterface>();
  const publicIPs = new Map<string, AzurePublicIP>();
  const refs = nics.map((spec, i) => {
    const id = `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/nic${i}`;
    interfaces.set(id.toLowerCase(), {
      id, name: `nic${i}`, ipConfigurations: spec.configs.map((c, j) => {
        n++;
        const pipID = `/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/publicIPAddresses/pip-${i}-${j}`;
        if (c.pip !== 'none') publicIPs.set(pipID.toLowerCase(), { id: pipID, ...(c.pip === 'allocated' ? { ipAddress: c.v6 ? `2603:1000::${n.toString(16)}` : `20.0.0.${n}` } : {}) });
        return {
          name: `c${j}`, primary: c.primary, privateIPAddress: c.v6 ? `fd00::${n.toString(16)}` : `10.0.0.${n}`, privateIPAddressVersion: c.v6 ? 'IPv6' : 'IPv4',
          ...(c.pip !== 'none' ? { publicIPAddress: { id: pipID } } : {}),
        };
      }),
    });
    return { id, primary: spec.primary };
  });
  return { nodeName: 'node-1', nics: refs, interfaces, publicIPs };
}

const family = (a: string): IPFamily => (a.includes(':') ? 6 : 4);

describe('azureNodeAddresses (properties)', () => {
  it('primary: the primary configuration of the primary NIC, and its first one of each other listed family', () => {
    fc.assert(
      fc.property(vm, families, (nics, fams) => {
        const input = build(nics);
        const primaryNic = [...input.interfaces.values()][nics.findIndex((x) => x.primary)]!;
        const configs = primaryNic.ipConfigurations!;
        const primaryConfig = configs.find((c) => c.primary)!;
        const chosen = [primaryConfig, ...fams.filter((f) => f !== family(primaryConfig.privateIPAddress!))
          .map((f) => configs.find((c) => family(c.privateIPAddress!) === f)).filter((c) => c !== undefined)];
        const wantInternal = chosen.map((c) => c.privateIPAddress!).filter((a) => fams.includes(family(a)));
        const wantExternal = chosen.map((c) => input.publicIPs.get((c.publicIPAddress?.id ?? '').toLowerCase())?.ipAddress).filter((a): a is string => !!a && fams.includes(family(a)));
        if (wantInternal.length === 0) {
          expect(() => azureNodeAddresses(input, { ipFamilies: fams })).toThrow(/has no private address/);
          return;
        }
        const out = azureNodeAddresses(input, { ipFamilies: fams });
        const h = out.findIndex((a) => a.type === 'Hostname');
        expect(out.filter((a) => a.type === 'Hostname')).toEqual([{ type: 'Hostname', address: 'node-1' }]);
        expect(out.slice(0, h).map((a) => a.address).sort()).toEqual([...wantInternal].sort());
        expect(out.slice(h + 1).map((a) => a.address).sort()).toEqual([...wantExternal].sort());
        expect(out.slice(0, h).every((a) => a.type === 'InternalIP') && out.slice(h + 1).every((a) => a.type === 'ExternalIP')).toBe(true);
        // At most one InternalIP per family, in the configured order.
        expect(out.slice(0, h).map((a) => family(a.address))).toEqual(fams.filter((f) => wantInternal.some((a) => family(a) === f)));
        if (fams[0] === 4) expect(out[0]).toEqual({ type: 'InternalIP', address: primaryConfig.privateIPAddress });
      }),
      { numRuns: 300 },
    );
  });

  it('all: reports every address of a listed family once, in the documented shape', () => {
    fc.assert(
      fc.property(vm, families, (nics, fams) => {
        const input = build(nics);
        const all = [...input.interfaces.values()].flatMap((x) => x.ipConfigurations ?? []);
        const wantInternal = all.map((c) => c.privateIPAddress!).filter((a) => fams.includes(family(a)));
        const wantExternal = all.map((c) => input.publicIPs.get((c.publicIPAddress?.id ?? '').toLowerCase())?.ipAddress).filter((a): a is string => !!a && fams.includes(family(a)));
        if (wantInternal.length === 0) {
          expect(() => azureNodeAddresses(input, { ipFamilies: fams, ipConfigurations: 'all' })).toThrow(/has no private address/);
          return;
        }
        const out = azureNodeAddresses(input, { ipFamilies: fams, ipConfigurations: 'all' });
        const h = out.findIndex((a) => a.type === 'Hostname');
        expect(out.filter((a) => a.type === 'Hostname')).toEqual([{ type: 'Hostname', address: 'node-1' }]);
        expect(out.slice(0, h).every((a) => a.type === 'InternalIP')).toBe(true);
        expect(out.slice(h + 1).every((a) => a.type === 'ExternalIP')).toBe(true);
        expect(out.slice(0, h).map((a) => a.address).sort()).toEqual([...wantInternal].sort());
        expect(out.slice(h + 1).map((a) => a.address).sort()).toEqual([...wantExternal].sort());
        // Families in the configured order within each kind.
        for (const part of [out.slice(0, h), out.slice(h + 1)]) {
          const seen = part.map((a) => fams.indexOf(family(a.address)));
          expect(seen).toEqual([...seen].sort((x, y) => x - y));
        }
        // The primary NIC's primary configuration (IPv4) leads when IPv4 is the first family.
        if (fams[0] === 4) {
          const primaryNic = [...input.interfaces.values()][nics.findIndex((x) => x.primary)]!;
          const primaryConfig = primaryNic.ipConfigurations!.find((c) => c.primary)!;
          expect(out[0]).toEqual({ type: 'InternalIP', address: primaryConfig.privateIPAddress });
        }
      }),
      { numRuns: 300 },
    );
  });
});
