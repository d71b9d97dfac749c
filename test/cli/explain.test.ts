import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../kit/cli.js';

const KEP_CLOUD = ['--address', 'InternalIP=10.0.0.1', '--address', 'InternalIP=10.0.0.2', '--address', 'InternalIP=fd00::1', '--address', 'InternalIP=fd00::2', '--address', 'ExternalIP=192.168.0.1'];

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'explain-test-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const nodeYaml = (annotation: string | undefined, statusAddresses: string) => `apiVersion: v1
kind: Node
metadata:
  name: node-a
${annotation === undefined ? '' : `  annotations:\n    alpha.kubernetes.io/provided-node-ip: "${annotation}"\n`}  labels:
    kubernetes.io/hostname: node-a
spec:
  taints:
  - effect: NoSchedule
    key: node.cloudprovider.kubernetes.io/uninitialized
    value: "true"
status:
  addresses:
${statusAddresses}
`;

describe('node-address-ccm explain', () => {
  it('prints a table with reasons, dropped addresses and the stack (exit 0)', async () => {
    const r = await runCli(['explain', '--node-ip', '10.0.0.2,fd00::2', ...KEP_CLOUD]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe('Annotation:  alpha.kubernetes.io/provided-node-ip="10.0.0.2,fd00::2" (set by kubelet --node-ip "10.0.0.2,fd00::2")');
    expect(lines).toContain('  1  InternalIP  10.0.0.2     matches node IP 10.0.0.2 (first in the annotation)');
    expect(lines).toContain('  2  InternalIP  fd00::2      matches node IP fd00::2 (second in the annotation)');
    expect(lines).toContain('  3  ExternalIP  192.168.0.1  kept: type ExternalIP is not claimed by any node IP');
    expect(lines).toContain('  InternalIP  10.0.0.1  dropped: type InternalIP is claimed by node IPs 10.0.0.2 and fd00::2, and this address is not a node IP');
    expect(lines).toContain('  InternalIP  fd00::1   dropped: type InternalIP is claimed by node IPs 10.0.0.2 and fd00::2, and this address is not a node IP');
    expect(lines).toContain('Stack:       dual-stack IPv4-primary (10.0.0.2, fd00::2)');
  });

  it('prints json (exit 0)', async () => {
    const r = await runCli(['explain', '--annotation', 'fd00::1,192.168.0.1', ...KEP_CLOUD, '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      annotation: 'fd00::1,192.168.0.1',
      addresses: [
        { type: 'InternalIP', address: 'fd00::1', reason: 'matches node IP fd00::1 (first in the annotation)' },
        { type: 'ExternalIP', address: '192.168.0.1', reason: 'matches node IP 192.168.0.1 (second in the annotation)' },
      ],
      dropped: [
        { type: 'InternalIP', address: '10.0.0.1', reason: 'dropped: type InternalIP is claimed by node IP fd00::1, and this address is not a node IP' },
        { type: 'InternalIP', address: '10.0.0.2', reason: 'dropped: type InternalIP is claimed by node IP fd00::1, and this address is not a node IP' },
        { type: 'InternalIP', address: 'fd00::2', reason: 'dropped: type InternalIP is claimed by node IP fd00::1, and this address is not a node IP' },
      ],
      stack: 'dual-stack IPv6-primary',
      tainted: false,
    });
  });

  it.each([
    [['--node-ip', '::'], 'dual-stack IPv4-primary'],
    [['--node-ip', '0.0.0.0'], 'dual-stack IPv4-primary'],
    [[], 'dual-stack IPv4-primary'],
  ])('sets no annotation for %j and keeps the cloud list as is', async (args, stack) => {
    const r = await runCli(['explain', ...args, ...KEP_CLOUD, '-o', 'json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.annotation).toBeNull();
    expect(report.addresses.map((a: { address: string }) => a.address)).toEqual(['10.0.0.1', '10.0.0.2', 'fd00::1', 'fd00::2', '192.168.0.1']);
    expect(report.dropped).toEqual([]);
    expect(report.stack).toBe(stack);
  });

  it('drops --node-ip items that are not IPs, as kubelet does, and says so on stderr', async () => {
    const partly = await runCli(['explain', '--node-ip', '10.0.0.2,bogus', ...KEP_CLOUD, '-o', 'json']);
    expect(partly.code).toBe(0);
    expect(JSON.parse(partly.stdout).annotation).toBe('10.0.0.2');
    expect(partly.stderr).toContain('warning: --node-ip: kubelet ignores "bogus" (not an IP), so it writes the annotation "10.0.0.2"');
    const none = await runCli(['explain', '--node-ip', '10.0.0.0/8', ...KEP_CLOUD, '-o', 'json']);
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout)).toMatchObject({ annotation: null, stack: 'dual-stack IPv4-primary' });
    expect(none.stderr).toContain('kubelet ignores "10.0.0.0/8" (not an IP), so it writes no annotation and the cloud list is used as is');
  });

  it('reports an unmatched node IP and the taint (exit 1), in table and json', async () => {
    const table = await runCli(['explain', '--node-ip', '9.10.11.12', ...KEP_CLOUD]);
    expect(table.code).toBe(1);
    expect(table.stdout).toContain('Error:       failed to get node address from cloud provider that matches ip: 9.10.11.12\n');
    expect(table.stdout).toContain('would stay tainted (node.cloudprovider.kubernetes.io/uninitialized)');
    const json = await runCli(['explain', '--annotation', ' 10.0.0.1', ...KEP_CLOUD, '-o', 'json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      annotation: ' 10.0.0.1',
      error: 'failed to parse node IP " 10.0.0.1": could not parse " 10.0.0.1"',
      tainted: true,
    });
  });

  it('rejects a dual-stack annotation when CloudDualStackNodeIPs is off, with a warning', async () => {
    const r = await runCli(['explain', '--feature-gates', 'CloudDualStackNodeIPs=false', '--annotation', '10.0.0.2,fd00::2', ...KEP_CLOUD, '-o', 'json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toBe('failed to parse node IP "10.0.0.2,fd00::2": dual-stack not supported in this configuration');
    expect(r.stderr).toMatch(/^warning: feature gate CloudDualStackNodeIPs is set to false/);
    const single = await runCli(['explain', '--feature-gates', 'CloudDualStackNodeIPs=false', '--annotation', '10.0.0.2', ...KEP_CLOUD, '-o', 'json']);
    expect(single.code).toBe(0);
  });

  it.each([
    [['--address', 'Internal=10.0.0.1'], '--address "Internal=10.0.0.1": unknown address type "Internal"'],
    [['--address', '10.0.0.1'], '--address "10.0.0.1": expected TYPE=ADDRESS'],
    [['--address', 'InternalIP='], '--address "InternalIP=": the address is empty'],
    [['--node', '/nonexistent/node.yaml'], '--node /nonexistent/node.yaml: cannot read: no such file'],
    [['--cloud-addresses', '/nonexistent/a.yaml'], '--cloud-addresses /nonexistent/a.yaml: cannot read: no such file'],
    [['--node-ip', '10.0.0.1,10.0.0.2'], '--node-ip "10.0.0.1,10.0.0.2": kubelet would refuse to start: must contain either a single IP or a dual-stack pair of IPs'],
    [['--node-ip', '10.0.0.1', '--annotation', '10.0.0.1'], '--node-ip and --annotation cannot be used together'],
    [['--address', 'InternalIP=10.0.0.1', '--cloud-addresses', '/dev/null'], '--address and --cloud-addresses cannot be used together'],
    [['--node', '-', '--cloud-addresses', '-'], '--node - and --cloud-addresses - cannot both read standard input'],
    [['--feature-gates', 'Nope=true'], '--feature-gates: unrecognized feature gate "Nope" (known: CloudDualStackNodeIPs)'],
    [['--feature-gates', 'CloudDualStackNodeIPs=maybe'], '--feature-gates: invalid value of CloudDualStackNodeIPs=maybe'],
    [['-o', 'yaml'], "argument 'yaml' is invalid"],
  ])('exits 2 on usage error %j', async (args, message) => {
    const r = await runCli(['explain', ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
  });

  it('reads the annotation from a Node YAML and mirrors its Hostname when the cloud has none', async () => {
    const node = write('node.yaml', nodeYaml('10.0.0.2', '  - address: 10.0.0.2\n    type: InternalIP\n  - address: node-a\n    type: Hostname'));
    const cloud = write('cloud.yaml', 'addresses:\n  - type: InternalIP\n    address: 10.0.0.1\n  - type: InternalIP\n    address: 10.0.0.2\n  - type: ExternalIP\n    address: 192.168.0.1\n');
    const r = await runCli(['explain', '--node', node, '--cloud-addresses', cloud, '-o', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      annotation: '10.0.0.2',
      addresses: [
        { type: 'InternalIP', address: '10.0.0.2', reason: 'matches node IP 10.0.0.2' },
        { type: 'ExternalIP', address: '192.168.0.1', reason: 'kept: type ExternalIP is not claimed by any node IP' },
        { type: 'Hostname', address: 'node-a', reason: "kept: type Hostname is not claimed by any node IP (Hostname mirrored from the node's status: the cloud reported none)" },
      ],
      dropped: [{ type: 'InternalIP', address: '10.0.0.1', reason: 'dropped: type InternalIP is claimed by node IP 10.0.0.2, and this address is not a node IP' }],
      stack: 'single-stack IPv4',
      tainted: false,
    });
    const table = await runCli(['explain', '--node', node, '--cloud-addresses', cloud]);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toBe(`Annotation:  alpha.kubernetes.io/provided-node-ip="10.0.0.2" (from ${node})`);
  });

  it('does not mirror the Hostname when the cloud reports one, and takes a JSON list from stdin', async () => {
    const node = write('node-hostname.yaml', nodeYaml(undefined, '  - address: kubelet-name\n    type: Hostname'));
    const cloud = JSON.stringify([
      { type: 'Hostname', address: 'cloud-name' },
      { type: 'InternalIP', address: 'fd00::1' },
    ]);
    const r = await runCli(['explain', '--node', node, '--cloud-addresses', '-', '-o', 'json'], { stdin: cloud });
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.annotation).toBeNull();
    expect(report.addresses.map((a: { address: string }) => a.address)).toEqual(['cloud-name', 'fd00::1']);
    expect(report.stack).toBe('single-stack IPv6');
  });

  it.each([
    ['list.yaml', 'apiVersion: v1\nkind: List\nitems: []\n', '--node', 'expected kind Node, got "List"'],
    ['bad-annotation.yaml', 'kind: Node\nmetadata:\n  annotations:\n    alpha.kubernetes.io/provided-node-ip: [1]\n', '--node', 'annotation alpha.kubernetes.io/provided-node-ip must be a string'],
    ['broken.yaml', 'kind: Node\nmetadata: [\n', '--node', 'not valid YAML or JSON'],
    ['not-list.yaml', 'type: InternalIP\n', '--cloud-addresses', 'expected a list of {type, address}'],
    ['bad-type.yaml', '- type: InternalIP\n  address: 10.0.0.1\n- type: LegacyHostIP\n  address: 10.0.0.2\n', '--cloud-addresses', 'entry 2: unknown address type "LegacyHostIP"'],
    ['no-address.yaml', '- type: InternalIP\n', '--cloud-addresses', 'entry 1: "address" must be a non-empty string'],
  ])('exits 2 on a bad %s', async (name, text, flag, message) => {
    const file = write(name, text);
    const r = await runCli(['explain', flag, file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${flag} ${JSON.stringify(file)}: ${message}`);
  });
});
