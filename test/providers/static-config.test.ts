import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import { parseStaticCloudConfig, parseWhole, StaticConfigError, StaticNodes, type StaticNode } from '../../providers/static/config.js';

describe('parseStaticCloudConfig', () => {
  it('parses the documented format with defaults and canonical addresses', () => {
    const cfg = parseStaticCloudConfig(`
nodes:
  node-a:
    providerID: static://custom-a
    instanceType: m5.large
    zone: zone-a
    region: region-1
    addresses:
      - { type: InternalIP, address: 10.0.0.1 }
      - { type: InternalIP, address: "FD00:0:0::1" }
      - { type: Hostname, address: node-a.example }
    podCIDRs: [10.244.0.0/24, "FD00:10::/64"]
    labels: { example.com/rack: r1 }
  node-b:
    addresses: []
  node-c:
`);
    expect([...cfg.nodes.keys()]).toEqual(['node-a', 'node-b', 'node-c']);
    expect(cfg.nodes.get('node-a')).toEqual({
      providerID: 'static://custom-a',
      instanceType: 'm5.large',
      zone: 'zone-a',
      region: 'region-1',
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'InternalIP', address: 'fd00::1' },
        { type: 'Hostname', address: 'node-a.example' },
      ],
      podCIDRs: ['10.244.0.0/24', 'fd00:10::/64'],
      labels: { 'example.com/rack': 'r1' },
      shutdown: false,
    });
    expect(cfg.nodes.get('node-b')).toEqual({ providerID: 'static://node-b', addresses: [], shutdown: false });
    expect(cfg.nodes.get('node-c')).toEqual({ providerID: 'static://node-c', addresses: [], shutdown: false });
  });

  it('providerID "" stands for a cloud that reports none (absent gives static://<name>)', () => {
    expect(parseStaticCloudConfig('nodes:\n  n1:\n    providerID: ""').nodes.get('n1')).toEqual({ providerID: '', addresses: [], shutdown: false });
  });

  it('accepts JSON, an empty file and an empty node list', () => {
    expect(parseStaticCloudConfig('{"nodes":{"n1":{"addresses":[{"type":"ExternalIP","address":"192.0.2.1"}],"shutdown":true}}}').nodes.get('n1')).toEqual({
      providerID: 'static://n1',
      addresses: [{ type: 'ExternalIP', address: '192.0.2.1' }],
      shutdown: true,
    });
    expect(parseStaticCloudConfig('').nodes.size).toBe(0);
    expect(parseStaticCloudConfig('nodes:').nodes.size).toBe(0);
  });

  const bad: Array<[string, string, string, RegExp]> = [
    ['unknown address type', 'nodes:\n  node-a:\n    addresses:\n      - {type: PublicIP, address: 1.2.3.4}', 'nodes.node-a.addresses[0].type', /unknown address type.*"PublicIP"/],
    ['non-IP InternalIP', 'nodes:\n  node-a:\n    addresses:\n      - {type: InternalIP, address: 10.0.0.1}\n      - {type: InternalIP, address: not-an-ip}', 'nodes.node-a.addresses[1].address', /InternalIP must be an IP address.*"not-an-ip"/],
    ['non-IP ExternalIP', 'nodes:\n  n:\n    addresses:\n      - {type: ExternalIP, address: 10.0.0.256}', 'nodes.n.addresses[0].address', /ExternalIP must be an IP address.*"10.0.0.256"/],
    ['IPv4 with leading zeros', 'nodes:\n  n:\n    addresses:\n      - {type: InternalIP, address: 010.0.0.1}', 'nodes.n.addresses[0].address', /"010.0.0.1"/],
    ['IPv6 with zone', 'nodes:\n  n:\n    addresses:\n      - {type: InternalIP, address: "fe80::1%eth0"}', 'nodes.n.addresses[0].address', /"fe80::1%eth0"/],
    ['missing address', 'nodes:\n  n:\n    addresses:\n      - {type: Hostname}', 'nodes.n.addresses[0].address', /missing/],
    ['CIDR with host bits', 'nodes:\n  n:\n    podCIDRs: [10.0.0.1/24]', 'nodes.n.podCIDRs[0]', /host bits.*"10.0.0.1\/24"/],
    ['CIDR without prefix', 'nodes:\n  n:\n    podCIDRs: [10.0.0.0]', 'nodes.n.podCIDRs[0]', /prefix-length.*"10.0.0.0"/],
    ['CIDR prefix too long', 'nodes:\n  n:\n    podCIDRs: ["fd00::/129"]', 'nodes.n.podCIDRs[0]', /0\.\.128.*"fd00::\/129"/],
    ['unknown node field', 'nodes:\n  n:\n    zones: a', 'nodes.n.zones', /unknown field.*"a"/],
    ['unknown top-level field', 'node:\n  n: {}', 'node', /unknown field/],
    ['nodes is a list', 'nodes: [a]', 'nodes', /value \["a"\]/],
    ['empty zone', 'nodes:\n  n:\n    zone: ""', 'nodes.n.zone', /must not be empty/],
    ['bad label key', 'nodes:\n  n:\n    labels: {"a b": x}', 'nodes.n.labels.a b', /label key.*"a b"/],
    ['bad label value', 'nodes:\n  n:\n    labels: {rack: "r 1"}', 'nodes.n.labels.rack', /label value.*"r 1"/],
    ['shutdown not boolean', 'nodes:\n  n:\n    shutdown: "yes"', 'nodes.n.shutdown', /"yes"/],
    ['empty node name', 'nodes:\n  "": {}', 'nodes.', /must not be empty \(key ""\)/],
    // Nodes are checked one at a time: still the problem one check of the whole file names first.
    ['a bad node before an unknown top-level field', 'extra: 1\nnodes:\n  a: {}\n  b:\n    zone: ""', 'nodes.b.zone', /must not be empty/],
    ['the first of two bad nodes, in file order', 'nodes:\n  b:\n    shutdown: 1\n  a:\n    zone: ""', 'nodes.b.shutdown', /value 1/],
    ['an empty node name after a bad node', 'nodes:\n  a:\n    zone: ""\n  "": {}', 'nodes.a.zone', /must not be empty/],
  ];
  it.each(bad)('rejects %s naming the field and value', (_name, text, field, message) => {
    let err: unknown;
    try {
      parseStaticCloudConfig(text);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StaticConfigError);
    expect((err as StaticConfigError).field).toBe(field);
    expect((err as Error).message).toContain(field);
    expect((err as Error).message).toMatch(message);
  });

  it('rejects YAML syntax errors and duplicate keys', () => {
    expect(() => parseStaticCloudConfig('nodes: {a: [}')).toThrow(/not valid YAML/);
    expect(() => parseStaticCloudConfig('nodes:\n  a: {}\n  a: {}')).toThrow(/not valid YAML/);
  });

  it('reads JSON on its fast path with the same refusal of a duplicate node', () => {
    expect(() => parseStaticCloudConfig('{"nodes": {\n  "a": {},\n  "a": {}}}')).toThrow(new StaticConfigError('cloud-config: duplicate key "a" in nodes (line 3): each key may appear once', '(top level)'));
    // JSON the fast path cannot read (a comment) still goes to the YAML parser.
    expect(parseStaticCloudConfig('{"nodes": {"a": {}}} # generated').nodes.get('a')?.providerID).toBe('static://a');
  });
});

describe('StaticNodes: entries kept compact, given back whole', () => {
  // Values with a newline (the separator of values kept as one string) and empty ones, besides
  // what a file holds: set() takes entries from anywhere.
  const address = fc.record({ type: fc.constantFrom('InternalIP' as const, 'ExternalIP' as const, 'Hostname' as const, 'InternalDNS' as const), address: fc.constantFrom('10.0.0.1', 'fd00::1', 'node-a.example', 'a\nb', '', '\n') }, { noNullPrototype: true });
  const node: fc.Arbitrary<StaticNode> = fc.record(
    {
      // static://a is the default for `a` (kept as none) and not for the others.
      providerID: fc.constantFrom('', 'static://a', 'static://b', 'static://', 'aws:///zone-a/i-1'),
      addresses: fc.array(address, { maxLength: 3 }),
      shutdown: fc.boolean(),
      instanceType: fc.constantFrom('m5.large', 't3.small'),
      zone: fc.constantFrom('zone-a', 'zone-b'),
      region: fc.constant('region-1'),
      podCIDRs: fc.array(fc.constantFrom('10.244.0.0/24', 'fd00:10::/64'), { maxLength: 2 }),
      labels: fc.dictionary(fc.constantFrom('rack', 'example.com/row'), fc.constantFrom('r1', 'r2'), { noNullPrototype: true }),
    },
    { requiredKeys: ['providerID', 'addresses', 'shutdown'], noNullPrototype: true },
  );

  it('gives back what was set, field for field, in the order set', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd', 'e'), node), { selector: ([name]) => name, maxLength: 5 }), (list) => {
        const nodes = new StaticNodes();
        for (const [name, n] of list) nodes.set(name, n);
        expect(nodes.size).toBe(list.length);
        expect([...nodes.keys()]).toEqual(list.map(([name]) => name));
        for (const [name, n] of list) {
          expect(nodes.has(name)).toBe(true);
          // Strictly: an absent field stays absent, not undefined.
          expect({ ...nodes.get(name) }).toStrictEqual(n);
        }
        expect([...nodes].map(([name, n]) => [name, { ...n }])).toEqual(list);
        expect(nodes.get('z')).toBeUndefined();
      }),
      { numRuns: 1000 },
    );
  });

  it('builds each entry anew: a caller that changes one changes nothing kept', () => {
    const nodes = new StaticNodes().set('a', { providerID: 'p', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], shutdown: false, labels: { rack: 'r1' }, podCIDRs: ['10.244.0.0/24'] });
    const first = nodes.get('a')!;
    first.addresses[0]!.address = '10.9.9.9';
    first.addresses.push({ type: 'Hostname', address: 'x' });
    first.labels!.rack = 'r9';
    first.podCIDRs!.push('10.245.0.0/24');
    expect(nodes.get('a')).toEqual({ providerID: 'p', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], shutdown: false, labels: { rack: 'r1' }, podCIDRs: ['10.244.0.0/24'] });
    expect(nodes.get('a')).not.toBe(nodes.get('a'));
  });
});

describe('a JSON file read one node at a time', () => {
  // Nodes good and bad (an unknown field, a bad address, a wrong type), names that repeat, a
  // top-level field good or unknown, and about half the texts with one punctuation mark changed.
  const entry = fc.oneof(
    fc.constant('{"zone": "z1", "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}]}'),
    fc.constant('{"providerID": "aws:///z/i-1", "addresses": [{"type": "InternalIP", "address": "fd00:0::1"}]}'),
    fc.constant('null'),
    fc.constant('{"zone": 3}'),
    fc.constant('{"addresses": [{"type": "InternalIP", "address": "10.0.0.300"}]}'),
    fc.constant('{"colour": "red"}'),
  );
  const text = fc.tuple(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'n\\u0031'), entry), { maxLength: 4 }), fc.constantFrom('', ', "extra": 1'), fc.nat(), fc.constantFrom('keep', 'keep', 'drop', ']', ',', ':', '}'))
    .map(([nodes, tail, at, how]) => {
      const t = `{"nodes": {${nodes.map(([k, v]) => `\n  "${k}": ${v}`).join(',')}}${tail}}`;
      const marks = [...t].flatMap((c, k) => ('{}[],:'.includes(c) ? [k] : []));
      const i = marks[at % marks.length]!;
      return how === 'keep' ? t : t.slice(0, i) + (how === 'drop' ? '' : how) + t.slice(i + 1);
    });
  const outcome = (parse: (t: string) => { nodes: StaticNodes }, t: string): unknown => {
    try {
      return { nodes: [...parse(t).nodes] };
    } catch (err) {
      expect(err).toBeInstanceOf(StaticConfigError);
      return { error: (err as Error).message, field: (err as StaticConfigError).field };
    }
  };

  it('gives the same nodes, or the same first error, as the whole file parsed at once', () => {
    fc.assert(fc.property(text, (t) => {
      expect(outcome(parseStaticCloudConfig, t)).toEqual(outcome(parseWhole, t));
    }), { numRuns: 1500 });
  });
});
