import { describe, it, expect } from 'vitest';
import { NodeIPError, parseKubeletNodeIPFlag, parseNodeIPAnnotation } from '../../src/nodeip/index.js';

const DUAL = { allowDualStack: true };
const SINGLE = { allowDualStack: false };

describe('parseNodeIPAnnotation', () => {
  it.each([
    ['1.2.3.4', DUAL, ['1.2.3.4']],
    ['1.2.3.4', SINGLE, ['1.2.3.4']],
    ['abcd::5678', SINGLE, ['abcd::5678']],
    ['010.000.000.002', SINGLE, ['10.0.0.2']],
    ['::ffff:10.0.0.2', SINGLE, ['10.0.0.2']],
    ['1.2.3.4,abcd::1234', DUAL, ['1.2.3.4', 'abcd::1234']],
    ['ABCD::1234,1.2.3.4', DUAL, ['abcd::1234', '1.2.3.4']],
    // A lone unspecified address is syntactically fine; only pairs reject it.
    ['0.0.0.0', SINGLE, ['0.0.0.0']],
    ['::', DUAL, ['::']],
  ])('%j (%o) gives %j', (value, options, expected) => {
    expect(parseNodeIPAnnotation(value, options)).toEqual(expected);
  });

  it.each([
    ['', DUAL, 'could not parse ""'],
    [' 1.2.3.4', DUAL, 'could not parse " 1.2.3.4"'],
    ['1.2.3.4, abcd::1', DUAL, 'could not parse " abcd::1"'],
    ['1.2.3.4,', DUAL, 'could not parse ""'],
    ['fe80::1%eth0', DUAL, 'could not parse "fe80::1%eth0"'],
    ['1.2.3', DUAL, 'could not parse "1.2.3"'],
    // The first unparsable item wins over later problems, and over the count check.
    ['x,y,1.2.3.4', DUAL, 'could not parse "x"'],
    ['1.2.3.4,5.6.7.8,bogus', DUAL, 'could not parse "bogus"'],
    ['1.2.3.4,5.6.7.8', DUAL, 'must contain either a single IP or a dual-stack pair of IPs'],
    ['abcd::1,abcd::2', DUAL, 'must contain either a single IP or a dual-stack pair of IPs'],
    ['1.2.3.4,abcd::1,5.6.7.8', DUAL, 'must contain either a single IP or a dual-stack pair of IPs'],
    // Family counting happens before the dual-stack permission check.
    ['1.2.3.4,5.6.7.8', SINGLE, 'must contain either a single IP or a dual-stack pair of IPs'],
    ['1.2.3.4,abcd::1', SINGLE, 'dual-stack not supported in this configuration'],
    ['0.0.0.0,abcd::1', SINGLE, 'dual-stack not supported in this configuration'],
    ['0.0.0.0,abcd::1', DUAL, "dual-stack node IP cannot include '0.0.0.0' or '::'"],
    ['1.2.3.4,::', DUAL, "dual-stack node IP cannot include '0.0.0.0' or '::'"],
    ['0.0.0.0,::', DUAL, "dual-stack node IP cannot include '0.0.0.0' or '::'"],
  ])('%j (%o) fails with %j', (value, options, message) => {
    expect(() => parseNodeIPAnnotation(value, options)).toThrow(NodeIPError);
    expect(() => parseNodeIPAnnotation(value, options)).toThrow(new NodeIPError(message));
  });
});

describe('parseKubeletNodeIPFlag (kubelet with --cloud-provider=external)', () => {
  it.each([
    [undefined, [], undefined, []],
    ['', [], undefined, []],
    // Unspecified means "autodetect": kubelet writes no annotation.
    ['0.0.0.0', ['0.0.0.0'], undefined, []],
    ['::', ['::'], undefined, []],
    ['1.2.3.4', ['1.2.3.4'], '1.2.3.4', []],
    [' 1.2.3.4 ', ['1.2.3.4'], '1.2.3.4', []],
    ['010.0.0.2', ['10.0.0.2'], '10.0.0.2', []],
    ['10.0.0.2, FD00::2', ['10.0.0.2', 'fd00::2'], '10.0.0.2,fd00::2', []],
    ['fd00::1,192.168.0.1', ['fd00::1', '192.168.0.1'], 'fd00::1,192.168.0.1', []],
    // Items that are not IPs are logged and ignored by kubelet, never fatal.
    ['1.2.3.4,bogus', ['1.2.3.4'], '1.2.3.4', ['bogus']],
    ['bogus', [], undefined, ['bogus']],
    ['1.2.3.4/24', [], undefined, ['1.2.3.4/24']],
    [' ', [], undefined, ['']],
    ['fd00::1, ,10.0.0.1', ['fd00::1', '10.0.0.1'], 'fd00::1,10.0.0.1', ['']],
  ])('%j gives node IPs %j, annotation %j, ignoring %j', (value, nodeIPs, annotation, ignored) => {
    expect(parseKubeletNodeIPFlag(value)).toEqual({ nodeIPs, annotation, ignored });
  });

  it.each([
    ['1.2.3.4,5.6.7.8', 'must contain either a single IP or a dual-stack pair of IPs'],
    ['1.2.3.4,bogus,5.6.7.8', 'must contain either a single IP or a dual-stack pair of IPs'],
    ['1.2.3.4,abcd::1,5.6.7.8', 'must contain either a single IP or a dual-stack pair of IPs'],
    ['0.0.0.0,fd00::1', "dual-stack node IP cannot include '0.0.0.0' or '::'"],
  ])('%j makes kubelet refuse to start: %s', (value, message) => {
    expect(() => parseKubeletNodeIPFlag(value)).toThrow(new NodeIPError(message));
  });
});
