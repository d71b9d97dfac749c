import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import type { NodeAddress } from '../../src/model/node-address.js';
import {
  NodeIPError, nodeAddressesFromNodeIP, parseIPSloppy, parseKubeletNodeIPFlag, parseNodeIPAnnotation,
} from '../../src/nodeip/index.js';
import { annotationText, cloudList, ipText } from './arbitraries.js';

describe('properties', () => {
  it('the annotation parser throws nothing but NodeIPError', () => {
    fc.assert(
      fc.property(annotationText, fc.boolean(), (value, allowDualStack) => {
        try {
          const ips = parseNodeIPAnnotation(value, { allowDualStack });
          expect(ips.length === 1 || ips.length === 2).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(NodeIPError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('the kubelet flag reader throws nothing but NodeIPError', () => {
    fc.assert(
      fc.property(fc.option(annotationText, { nil: undefined }), (value) => {
        try {
          const { nodeIPs, annotation, ignored } = parseKubeletNodeIPFlag(value);
          expect(nodeIPs.length).toBeLessThanOrEqual(2);
          // Every item is either a node IP or ignored (and reported as such).
          expect(nodeIPs.length + ignored.length).toBe(value === undefined || value === '' ? 0 : value.split(',').length);
          if (annotation !== undefined) expect(annotation).toBe(nodeIPs.join(','));
        } catch (err) {
          expect(err).toBeInstanceOf(NodeIPError);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('IPv6 canonical text matches the WHATWG URL serializer (same RFC 5952 rules)', () => {
    // Runs of zeros are likely enough to exercise "::" placement and ties.
    const group = fc.oneof(fc.constant(0), fc.constant(0), fc.nat(0xffff));
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), fc.boolean(), (groups, upper) => {
        let text = groups.map((g) => g.toString(16).padStart(upper ? 4 : 1, '0')).join(':');
        if (upper) text = text.toUpperCase();
        const ip = parseIPSloppy(text)!;
        const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
        if (mapped) {
          // Go prints IPv4-mapped addresses as IPv4.
          expect(ip.family).toBe(4);
          expect(ip.canonical).toBe(`${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`);
        } else {
          expect(ip.family).toBe(6);
          expect(ip.canonical).toBe(new URL(`http://[${text}]/`).hostname.slice(1, -1));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('IPv4 parts with leading zeros are read as decimal', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(255), fc.nat(3)), { minLength: 4, maxLength: 4 }), (parts) => {
        const text = parts.map(([n, zeros]) => '0'.repeat(zeros) + String(n)).join('.');
        expect(parseIPSloppy(text)).toMatchObject({ family: 4, canonical: parts.map(([n]) => n).join('.') });
      }),
    );
  });

  it('canonical text parses back to itself', () => {
    fc.assert(
      fc.property(ipText, (text) => {
        const ip = parseIPSloppy(text);
        expect(ip).toBeDefined();
        expect(parseIPSloppy(ip!.canonical)?.canonical).toBe(ip!.canonical);
      }),
    );
  });

  it('the selection is a reordering of a subset of the cloud list, node IPs first and in order', () => {
    fc.assert(
      fc.property(annotationText, cloudList, fc.boolean(), (annotation, cloud, allowDualStack) => {
        let result: NodeAddress[];
        try {
          result = nodeAddressesFromNodeIP(annotation, cloud, { allowDualStack });
        } catch (err) {
          expect(err).toBeInstanceOf(NodeIPError);
          return;
        }
        // Subset as a multiset: each result entry consumes one equal cloud entry.
        const remaining = cloud.map((a) => `${a.type}\u0000${a.address}`);
        for (const a of result) {
          const i = remaining.indexOf(`${a.type}\u0000${a.address}`);
          expect(i).toBeGreaterThanOrEqual(0);
          remaining.splice(i, 1);
        }
        // The leading entries are exactly the cloud entries equal to each node IP, in annotation order.
        const nodeIPs = parseNodeIPAnnotation(annotation, { allowDualStack });
        const expectedHead = nodeIPs.flatMap((ip) => cloud.filter((a) => parseIPSloppy(a.address)?.canonical === ip));
        expect(result.slice(0, expectedHead.length)).toEqual(expectedHead);
        for (const ip of nodeIPs) expect(expectedHead.some((a) => parseIPSloppy(a.address)?.canonical === ip)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('selection with a matchable annotation keeps every address of an unclaimed type', () => {
    fc.assert(
      fc.property(cloudList.filter((c) => c.some((a) => parseIPSloppy(a.address) !== undefined)), fc.nat(), (cloud, pick) => {
        const candidates = cloud.filter((a) => parseIPSloppy(a.address) !== undefined);
        const chosen = candidates[pick % candidates.length]!;
        const result = nodeAddressesFromNodeIP(chosen.address, cloud, { allowDualStack: true });
        const ip = parseIPSloppy(chosen.address)!.canonical;
        const claimed = new Set(cloud.filter((a) => parseIPSloppy(a.address)?.canonical === ip).map((a) => a.type));
        const tail = cloud.filter((a) => !claimed.has(a.type));
        expect(result.slice(result.length - tail.length)).toEqual(tail);
      }),
    );
  });
});
