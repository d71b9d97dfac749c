// `explain` in process: the report comes from the controller's own decision (issue 12 cases), and
// the table quotes values as Go's %q. Expected texts are written out by hand.
import { describe, expect, it } from 'vitest';
import { buildExplainReport, renderExplainTable } from '../../src/cli/commands/explain-report.js';

const I = (address: string) => ({ type: 'InternalIP' as const, address });
const H = (address: string) => ({ type: 'Hostname' as const, address });

describe('explain: issue 12 decisions', () => {
  it('annotation with an empty cloud list: tainted, with the controller error', () => {
    expect(buildExplainReport('10.0.0.1', [], { allowDualStack: true })).toEqual({
      annotation: '10.0.0.1',
      error: 'failed to get node address from cloud provider that matches ip: 10.0.0.1',
      tainted: true,
    });
  });

  it('no annotation, empty cloud list: untainted, addresses left as kubelet set them', () => {
    const report = buildExplainReport(undefined, [], { allowDualStack: true, nodeAddresses: [H('node-a')] });
    expect(report).toEqual({ annotation: null, cloudAddresses: 'none', tainted: false });
    expect(renderExplainTable(report, { kind: 'none' })).toBe([
      'Annotation:  (none)',
      '',
      'Resulting node addresses:',
      '  (unchanged: the cloud reported no addresses, so status.addresses stays as kubelet set it)',
      '',
      'Result:      the node.cloudprovider.kubernetes.io/uninitialized taint can be removed',
      '',
    ].join('\n'));
  });

  it("only the kubelet's Hostname equals the annotated IP: tainted", () => {
    const report = buildExplainReport('10.0.0.5', [I('10.0.0.1')], { allowDualStack: true, nodeAddresses: [H('10.0.0.5')] });
    expect(report).toEqual({ annotation: '10.0.0.5', error: 'failed to get node address from cloud provider that matches ip: 10.0.0.5', tainted: true });
  });

  it("the kubelet's Hostname is mirrored after the check, when the cloud reports none", () => {
    const report = buildExplainReport('10.0.0.1', [I('10.0.0.1')], { allowDualStack: true, nodeAddresses: [H('10.0.0.5')] });
    expect(report.tainted).toBe(false);
    expect('addresses' in report && report.addresses.map((a) => `${a.type}=${a.address}`)).toEqual(['InternalIP=10.0.0.1', 'Hostname=10.0.0.5']);
  });

  it('quotes the annotation and the flag as Go does', () => {
    const report = buildExplainReport('10.0.0.1\u0001', [I('10.0.0.1')], { allowDualStack: true });
    expect(renderExplainTable(report)).toBe([
      'Annotation:  alpha.kubernetes.io/provided-node-ip="10.0.0.1\\x01"',
      '',
      'Error:       failed to parse node IP "10.0.0.1\\x01": could not parse "10.0.0.1\\x01"',
      'Result:      a new node would stay tainted (node.cloudprovider.kubernetes.io/uninitialized); an initialized node keeps its current addresses',
      '',
    ].join('\n'));
    expect(renderExplainTable(buildExplainReport(undefined, [I('10.0.0.1')], { allowDualStack: true }), { kind: 'node-ip', flag: '\ufeff10.0.0.1' }))
      .toContain('Annotation:  (none: kubelet --node-ip "\\ufeff10.0.0.1" sets no annotation)');
  });
});
