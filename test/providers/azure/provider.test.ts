// The azure adapter against the ARM emulator, built the way the CLI builds it (from an azure.json)
// with a real @azure/identity credential: workload identity (a token file exchanged at the
// emulated AAD tenant found through the ARM endpoint's metadata), a user-assigned managed identity
// (the emulated IMDS), a client secret. The only test seam is trust in the emulator's certificate.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AzureEmulator, type EmulatedScaleSetVM, type EmulatedVM } from '../../emulators/azure/server.js';
import { AZURE_LISTING_MAX_AGE_MS, createAzureProvider, ThrottleGate, type AzureFactoryOptions, type AzureProvider } from '../../../providers/azure/index.js';
import type { InstanceResult, NodeRef } from '../../../providers/types.js';

const SUB = '0b1f6471-1bf0-4dda-aec3-111122223333';
const RG = 'k8s-nodes';
const POOL = 'aks-pool-vmss';

function summarise<T>(m: Map<string, InstanceResult<T>>): Record<string, unknown> {
  return Object.fromEntries([...m].map(([k, v]) => [k, v.kind === 'found' ? v.value : v.kind === 'error' ? `error: ${v.error.message}` : 'notFound']));
}

const vmPID = (name: string, rg = RG) => `azure:///subscriptions/${SUB}/resourceGroups/${rg}/providers/Microsoft.Compute/virtualMachines/${name}`;
const ssPID = (id: number, ss = POOL) => `azure:///subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/${ss}/virtualMachines/${id}`;
const computerName = (id: number) => `${POOL}${id.toString(36).padStart(6, '0')}`;

function vm(name: string, n: number, extra: Partial<EmulatedVM> = {}): EmulatedVM {
  return { name, location: 'westeurope', zones: [String((n % 3) + 1)], nics: [{ name: `${name}-nic`, ipConfigs: [{ privateIP: `10.1.${Math.floor(n / 250)}.${(n % 250) + 4}` }] }], ...extra };
}
function inst(id: number, extra: Partial<EmulatedScaleSetVM> = {}): EmulatedScaleSetVM {
  return { instanceId: String(id), zones: [String((id % 3) + 1)], faultDomain: id % 5, nics: [{ name: 'nic0', ipConfigs: [{ privateIP: `10.2.${Math.floor(id / 250)}.${(id % 250) + 4}` }] }], ...extra };
}

describe('azure provider against the ARM emulator', () => {
  const emu = new AzureEmulator();
  let dir = '';
  let tokenFile = '';
  const built: AzureProvider[] = [];

  /** A provider from an azure.json, with workload identity unless the config says otherwise. */
  async function provider(config: Record<string, unknown> = {}, options: AzureFactoryOptions = {}): Promise<AzureProvider> {
    const text = JSON.stringify({
      cloud: 'AzurePublicCloud', tenantId: emu.tenantId, subscriptionId: SUB, resourceGroup: RG, vmType: 'vmss',
      useFederatedWorkloadIdentityExtension: true, aadClientId: emu.clientId, aadFederatedTokenFile: tokenFile,
      resourceManagerEndpoint: emu.url, ...config,
    });
    const p = await createAzureProvider({ cloudConfig: { path: path.join(dir, 'azure.json'), text } }, {
      tlsCA: emu.ca, env: {}, listingMaxAgeMs: 0, retryDelayMs: 10, gate: new ThrottleGate(), ...options,
    });
    built.push(p);
    return p;
  }

  beforeAll(async () => {
    await emu.start();
    dir = await mkdtemp(path.join(tmpdir(), 'azure-provider-'));
    tokenFile = path.join(dir, 'azure-identity-token');
    await writeFile(tokenFile, emu.federatedToken);
  });
  afterAll(async () => {
    await emu.stop();
    await rm(dir, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const p of built.splice(0)) await p.close();
  });
  beforeEach(() => {
    emu.reset();
    for (const name of ['vm-a', 'vm-b', 'vm-dual', 'vm-other-rg', 'flex-1', 'vm-stopped', 'vm-new']) emu.removeVM(SUB, RG, name);
    emu.removeVM(SUB, 'other-rg', 'vm-other-rg');
    emu.removeScaleSet(SUB, RG, POOL);
    emu.removeScaleSet(SUB, RG, 'flex');
    emu.addVM(SUB, RG, vm('vm-a', 1, { size: 'Standard_D4s_v5' }));
    emu.addVM(SUB, RG, vm('vm-b', 2, { zones: undefined, faultDomain: 2 }));
    emu.addVM(SUB, RG, {
      name: 'vm-dual', location: 'westeurope', zones: ['1'], nics: [
        { name: 'dual-nic2', ipConfigs: [{ privateIP: '10.3.0.9' }] },
        { name: 'dual-nic1', primary: true, ipConfigs: [
          { name: 'v6', primary: false, privateIP: 'fd00:10:3::4', publicIP: '2603:1020::4' },
          { name: 'v4', primary: true, privateIP: '10.3.0.4', publicIP: '20.50.0.4' },
        ] },
      ],
    });
    // A NIC in the network team's resource group.
    emu.addVM(SUB, 'other-rg', { name: 'vm-other-rg', location: 'westeurope', zones: ['2'], nics: [{ name: 'orn', resourceGroup: 'net-rg', ipConfigs: [{ privateIP: '10.9.0.4', publicIP: '' }] }] });
    emu.addScaleSet(SUB, RG, { name: POOL, computerNamePrefix: POOL, size: 'Standard_D8s_v5' });
    emu.addScaleSetVM(SUB, RG, POOL, inst(0, { nics: [{ name: 'nic0', ipConfigs: [{ privateIP: '10.2.0.4', publicIP: '20.60.0.4' }] }] }));
    emu.addScaleSetVM(SUB, RG, POOL, inst(1, { zones: undefined, faultDomain: 3 }));
    emu.addScaleSetVM(SUB, RG, POOL, inst(2, { powerState: 'deallocated' }));
    emu.addScaleSet(SUB, RG, { name: 'flex', orchestrationMode: 'Flexible' });
    emu.addVM(SUB, RG, vm('flex-1', 7, { scaleSet: 'flex' }));
  });

  it('answers standalone VMs and scale-set instances, by providerID or by name, in one round of list calls', async () => {
    const azure = await provider();
    const nodes: NodeRef[] = [
      { name: 'vm-a', providerID: vmPID('vm-a') },
      { name: 'vm-b' },
      { name: 'vm-dual' },
      { name: 'vm-other-rg', providerID: vmPID('vm-other-rg', 'other-rg') },
      { name: computerName(0), providerID: ssPID(0) },
      { name: computerName(1) },
      { name: 'flex-1' },
    ];
    const res = summarise(await azure.instancesMetadata(nodes));
    expect(res['vm-a']).toEqual({
      providerID: vmPID('vm-a'), instanceType: 'Standard_D4s_v5', zone: 'westeurope-2', region: 'westeurope',
      addresses: [{ type: 'InternalIP', address: '10.1.0.5' }, { type: 'Hostname', address: 'vm-a' }],
    });
    // No zone: the fault domain, from the subscription's run-time view.
    expect(res['vm-b']).toMatchObject({ providerID: vmPID('vm-b'), zone: '2', region: 'westeurope' });
    // The IPv4 cluster gets the IPv4 configurations, primary NIC and configuration first.
    expect(res['vm-dual']).toMatchObject({ addresses: [{ type: 'InternalIP', address: '10.3.0.4' }, { type: 'InternalIP', address: '10.3.0.9' }, { type: 'Hostname', address: 'vm-dual' }, { type: 'ExternalIP', address: '20.50.0.4' }] });
    // A public IP without an address yet gives no ExternalIP.
    expect(res['vm-other-rg']).toMatchObject({ providerID: vmPID('vm-other-rg', 'other-rg'), addresses: [{ type: 'InternalIP', address: '10.9.0.4' }, { type: 'Hostname', address: 'vm-other-rg' }] });
    expect(res[computerName(0)]).toEqual({
      providerID: ssPID(0), instanceType: 'Standard_D8s_v5', zone: 'westeurope-1', region: 'westeurope',
      addresses: [{ type: 'InternalIP', address: '10.2.0.4' }, { type: 'Hostname', address: computerName(0) }, { type: 'ExternalIP', address: '20.60.0.4' }],
    });
    expect(res[computerName(1)]).toMatchObject({ providerID: ssPID(1), zone: '3' });
    // A flexible scale set's instances are VMs.
    expect(res['flex-1']).toMatchObject({ providerID: vmPID('flex-1') });
    // Each scope once: the VMs of two resource groups, the subscription's power states, the scale
    // sets (for the names), one scale set's instances, NICs of three groups and one scale set, public IPs likewise.
    expect(emu.count('vms')).toBe(2);
    expect(emu.count('vmStatuses')).toBe(1);
    expect(emu.count('scaleSets')).toBe(1);
    expect(emu.count('scaleSetVMs')).toBe(1);
    expect(emu.count('nics')).toBe(2); // k8s-nodes and net-rg
    expect(emu.count('scaleSetNics')).toBe(1);
    expect(emu.count('pips')).toBe(2);
    expect(emu.count('scaleSetPips')).toBe(1);
    expect(emu.requests.filter((r) => r.kind === 'scaleSetVMs').every((r) => r.query.$expand === 'instanceView')).toBe(true);
    expect(emu.requests.filter((r) => r.kind === 'vmStatuses').every((r) => r.query.statusOnly === 'true')).toBe(true);
    // The credential was used for real: one token from the emulated tenant, for every call.
    expect(emu.count('token')).toBe(1);
  });

  it('dual-stack: IPv6 configurations and public IPs included, in the configured family order', async () => {
    const v4first = await provider({ nodeIPFamilies: ['IPv4', 'IPv6'] });
    const v6first = await provider({ nodeIPFamilies: ['IPv6', 'IPv4'] });
    const a = summarise(await v4first.instancesMetadata([{ name: 'vm-dual' }]));
    const b = summarise(await v6first.instancesMetadata([{ name: 'vm-dual' }]));
    const addrs = (r: unknown) => (r as { addresses: { type: string; address: string }[] }).addresses.map((x) => `${x.type} ${x.address}`);
    expect(addrs(a['vm-dual'])).toEqual(['InternalIP 10.3.0.4', 'InternalIP 10.3.0.9', 'InternalIP fd00:10:3::4', 'Hostname vm-dual', 'ExternalIP 20.50.0.4', 'ExternalIP 2603:1020::4']);
    expect(addrs(b['vm-dual'])).toEqual(['InternalIP fd00:10:3::4', 'InternalIP 10.3.0.4', 'InternalIP 10.3.0.9', 'Hostname vm-dual', 'ExternalIP 2603:1020::4', 'ExternalIP 20.50.0.4']);
  });

  it('instancesExist and instancesShutdown: power and provisioning states as cloud-provider-azure reads them', async () => {
    const azure = await provider();
    emu.addVM(SUB, RG, vm('vm-stopped', 9, { powerState: 'stopped' }));
    const deallocating = emu.addScaleSetVM(SUB, RG, POOL, inst(3, { powerState: 'deallocating' }));
    const creating = emu.addScaleSetVM(SUB, RG, POOL, inst(4, { powerState: 'stopped', provisioningState: 'Creating' }));
    const nodes: NodeRef[] = [
      { name: 'vm-a', providerID: vmPID('vm-a') }, { name: 'vm-stopped' },
      { name: 'ss-0', providerID: ssPID(0) }, { name: 'ss-2', providerID: ssPID(2) }, { name: 'ss-3', providerID: ssPID(3) }, { name: 'ss-4', providerID: ssPID(4) },
      { name: 'gone-vm', providerID: vmPID('gone-vm') }, { name: 'gone-ss', providerID: ssPID(99) }, { name: 'nobody' },
    ];
    expect(summarise(await azure.instancesExist(nodes))).toEqual({
      'vm-a': true, 'vm-stopped': true, 'ss-0': true, 'ss-2': true, 'ss-3': true, 'ss-4': true, 'gone-vm': false, 'gone-ss': false, nobody: false,
    });
    expect(summarise(await azure.instancesShutdown(nodes))).toEqual({
      'vm-a': false, 'vm-stopped': true, 'ss-0': false, 'ss-2': true, 'ss-3': true, 'ss-4': false, 'gone-vm': 'notFound', 'gone-ss': 'notFound', nobody: 'notFound',
    });
    expect([deallocating, creating].length).toBe(2);
    // A VM started again.
    emu.setState(emu.addVM(SUB, RG, vm('vm-stopped', 9, { powerState: 'stopped' })), { powerState: 'running' });
    expect(summarise(await azure.instancesShutdown([{ name: 'vm-stopped' }]))).toEqual({ 'vm-stopped': false });
  });

  it('a scale set that is gone: its instances do not exist; a resource group that fails: its nodes are errors, never gone', async () => {
    const azure = await provider();
    emu.removeScaleSet(SUB, RG, POOL);
    expect(summarise(await azure.instancesExist([{ name: 'ss-0', providerID: ssPID(0) }]))).toEqual({ 'ss-0': false });
    emu.failNext(403);
    expect(summarise(await azure.instancesExist([{ name: 'vm-a', providerID: vmPID('vm-a') }]))['vm-a'])
      .toMatch(/^error: azure: node vm-a: listing the VMs of resource group k8s-nodes failed: AuthorizationFailed, HTTP 403/);
    // A node without a providerID may be a scale-set instance: when the scale sets cannot be listed,
    // a name no VM has is unanswered, not gone; a VM's name is still found.
    emu.failNext(403);
    const res = summarise(await azure.instancesExist([{ name: 'nobody' }, { name: 'vm-b' }]));
    expect(res.nobody).toMatch(/^error: azure: node nobody: not found, but listing the scale sets of k8s-nodes: AuthorizationFailed, HTTP 403/);
    expect(res['vm-b']).toBe(true);
  });

  it('providerIDs of another subscription or of another shape are errors for their node only', async () => {
    const azure = await provider();
    const res = summarise(await azure.instancesMetadata([
      { name: 'x', providerID: vmPID('vm-a').replace(SUB, 'ffffffff-0000-0000-0000-000000000000') },
      { name: 'y', providerID: 'gce://p/us-central1-a/n' },
      { name: 'vm-a' },
    ]));
    expect(res.x).toMatch(/is in subscription ffffffff-0000-0000-0000-000000000000, this adapter reads 0b1f6471/);
    expect(res.y).toMatch(/does not start with azure:\/\//);
    expect(res['vm-a']).toMatchObject({ providerID: vmPID('vm-a') });
  });

  it('an instance whose NIC names no primary is an error for that node only', async () => {
    const azure = await provider();
    emu.addVM(SUB, RG, vm('vm-new', 11, { nics: [{ name: 'n1', ipConfigs: [{ privateIP: '10.5.0.1' }] }, { name: 'n2', ipConfigs: [{ privateIP: '10.5.0.2' }] }] }));
    const res = summarise(await azure.instancesMetadata([{ name: 'vm-new' }, { name: 'vm-a' }]));
    expect(res['vm-new']).toMatch(/^error: azure: node vm-new: failed to find a primary nic for the vm\. vmname="vm-new"/);
    expect(res['vm-a']).toMatchObject({ providerID: vmPID('vm-a') });
  });

  it('ARM throttling: a 429 is retried only after its Retry-After, and holds the process\'s other calls until then', async () => {
    const gate = new ThrottleGate();
    const first = await provider({}, { gate });
    const second = await provider({}, { gate });
    emu.throttleNext(1, 1);
    const one = first.instancesExist([{ name: 'vm-a', providerID: vmPID('vm-a') }]);
    // Once the 429 is in, a call of another provider in the process waits for the gate too.
    while (!emu.requests.some((r) => r.status === 429)) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const two = second.instancesExist([{ name: 'ss-0', providerID: ssPID(0) }]);
    expect(summarise(await one)).toEqual({ 'vm-a': true });
    expect(summarise(await two)).toEqual({ 'ss-0': true });
    const throttled = emu.requests.find((r) => r.status === 429)!;
    const later = emu.requests.filter((r) => r.at > throttled.at && r.kind !== 'token' && r.kind !== 'openid' && r.kind !== 'metadata');
    expect(later.map((r) => r.kind).sort()).toEqual(['scaleSetVMs', 'vms']);
    // Neither the retry nor the other provider's listing reached ARM before Retry-After had passed.
    for (const r of later) expect(r.at - throttled.at).toBeGreaterThanOrEqual(990);
    expect(gate.throttles).toBe(1);
  });

  it('ARM throttling that outlasts the retries: retryable errors, then recovery', async () => {
    const azure = await provider({}, { maxRetries: 1 });
    emu.throttleNext(2, 0);
    const res = summarise(await azure.instancesExist([{ name: 'vm-a', providerID: vmPID('vm-a') }]));
    expect(res['vm-a']).toMatch(/^error: azure: node vm-a: listing the VMs of resource group k8s-nodes failed: TooManyRequests, HTTP 429/);
    expect(emu.requests.filter((r) => r.status === 429)).toHaveLength(2);
    expect(summarise(await azure.instancesExist([{ name: 'vm-a', providerID: vmPID('vm-a') }]))).toEqual({ 'vm-a': true });
  });

  it('an outage makes every node a retryable error; a transient 500 is retried within the call', async () => {
    const azure = await provider();
    emu.setOutage(503);
    const res = await azure.instancesExist([{ name: 'vm-a' }, { name: computerName(0) }]);
    expect([...res.values()].every((r) => r.kind === 'error')).toBe(true);
    emu.setOutage(undefined);
    emu.failNext(500);
    expect(summarise(await azure.instancesExist([{ name: 'vm-a' }, { name: computerName(0) }]))).toEqual({ 'vm-a': true, [computerName(0)]: true });
  });

  it('an aborted round rejects instead of reporting per-node errors', async () => {
    const azure = await provider();
    const ac = new AbortController();
    ac.abort(new Error('resync cancelled'));
    await expect(azure.instancesMetadata([{ name: 'vm-a' }], ac.signal)).rejects.toThrow(/resync cancelled/);
  });

  it('listings are shared within their max age; "not found" only from a listing made after the question', async () => {
    let clock = 1_000_000;
    const cached = await provider({}, { listingMaxAgeMs: AZURE_LISTING_MAX_AGE_MS, now: () => clock });
    expect(summarise(await cached.instancesExist([{ name: 'vm-a' }]))).toEqual({ 'vm-a': true });
    clock += 1_000;
    expect(summarise(await cached.instancesExist([{ name: 'vm-b' }, { name: computerName(0) }]))).toEqual({ 'vm-b': true, [computerName(0)]: true });
    expect(emu.count('vms')).toBe(1);
    expect(emu.count('scaleSetVMs')).toBe(1);
    // Created after the listing: looked up afresh before it is called gone.
    emu.addVM(SUB, RG, vm('vm-new', 12));
    clock += 1_000;
    expect(summarise(await cached.instancesExist([{ name: 'vm-new' }]))).toEqual({ 'vm-new': true });
    expect(emu.count('vms')).toBe(2);
    // A deletion shows once the listing is older than the max age.
    emu.removeVM(SUB, RG, 'vm-new');
    expect(summarise(await cached.instancesExist([{ name: 'vm-new' }]))).toEqual({ 'vm-new': true });
    clock += AZURE_LISTING_MAX_AGE_MS + 1;
    expect(summarise(await cached.instancesExist([{ name: 'vm-new' }]))).toEqual({ 'vm-new': false });
  });

  it('a user-assigned managed identity: tokens from IMDS', async () => {
    const before = process.env.AZURE_POD_IDENTITY_AUTHORITY_HOST;
    process.env.AZURE_POD_IDENTITY_AUTHORITY_HOST = emu.imdsUrl;
    try {
      const azure = await provider({ useFederatedWorkloadIdentityExtension: false, useManagedIdentityExtension: true, userAssignedIdentityID: emu.managedIdentityClientId });
      expect(summarise(await azure.instancesExist([{ name: 'vm-a' }]))).toEqual({ 'vm-a': true });
      const imds = emu.requests.filter((r) => r.kind === 'imds');
      expect(imds.length).toBeGreaterThan(0);
      expect(imds.every((r) => r.query.client_id === emu.managedIdentityClientId)).toBe(true);
      expect(emu.count('token')).toBe(0);
    } finally {
      if (before === undefined) delete process.env.AZURE_POD_IDENTITY_AUTHORITY_HOST;
      else process.env.AZURE_POD_IDENTITY_AUTHORITY_HOST = before;
    }
  });

  it('a resourceManagerEndpoint that does not answer its metadata stops the provider from being built', async () => {
    await expect(provider({ resourceManagerEndpoint: 'https://127.0.0.1:9' })).rejects.toThrow(/^azure: resourceManagerEndpoint: reading the cloud's endpoints failed: /);
  });

  it('a client secret; a wrong one fails every node as retryable', async () => {
    const azure = await provider({ useFederatedWorkloadIdentityExtension: false, aadClientSecret: emu.clientSecret });
    expect(summarise(await azure.instancesExist([{ name: 'vm-a' }]))).toEqual({ 'vm-a': true });
    const wrong = await provider({ useFederatedWorkloadIdentityExtension: false, aadClientSecret: 'not-it' }, { maxRetries: 0 });
    const res = summarise(await wrong.instancesExist([{ name: 'vm-a' }]));
    expect(res['vm-a']).toMatch(/^error: .*AADSTS7000215/);
  });
});

describe('azure provider: calls per batch of 500 nodes', () => {
  const emu = new AzureEmulator();
  let dir = '';
  let tokenFile = '';
  const built: AzureProvider[] = [];
  const N = 1000;

  async function build(options: AzureFactoryOptions = {}): Promise<AzureProvider> {
    const text = JSON.stringify({ tenantId: emu.tenantId, subscriptionId: SUB, resourceGroup: RG, useFederatedWorkloadIdentityExtension: true, aadClientId: emu.clientId, aadFederatedTokenFile: tokenFile, resourceManagerEndpoint: emu.url });
    const p = await createAzureProvider({ cloudConfig: { path: 'azure.json', text } }, { tlsCA: emu.ca, env: {}, gate: new ThrottleGate(), ...options });
    built.push(p);
    return p;
  }

  beforeAll(async () => {
    await emu.start();
    dir = await mkdtemp(path.join(tmpdir(), 'azure-batch-'));
    tokenFile = path.join(dir, 'token');
    await writeFile(tokenFile, emu.federatedToken);
    emu.addScaleSet(SUB, RG, { name: POOL, computerNamePrefix: POOL });
    for (let i = 0; i < N; i++) {
      emu.addScaleSetVM(SUB, RG, POOL, inst(i, { nics: [{ name: 'nic0', ipConfigs: [{ privateIP: `10.2.${Math.floor(i / 250)}.${(i % 250) + 4}`, publicIP: `20.60.${Math.floor(i / 250)}.${(i % 250) + 4}` }] }] }));
      emu.addVM(SUB, RG, vm(`vm-${i}`, i, { zones: undefined, faultDomain: i % 3 }));
    }
  }, 60_000);
  afterAll(async () => {
    for (const p of built) await p.close();
    await emu.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('500 new scale-set instances (named, no providerID): 5 calls; 500 initialised VMs: 3 calls; never one per node', async () => {
    const azure = await build({ listingMaxAgeMs: 0 });
    emu.reset();
    const named = Array.from({ length: 500 }, (_, i) => ({ name: computerName(i) }));
    const res = await azure.instancesMetadata(named);
    expect([...res.values()].every((r) => r.kind === 'found')).toBe(true);
    const r7 = res.get(computerName(7));
    expect(r7?.kind === 'found' && r7.value.addresses).toEqual([{ type: 'InternalIP', address: '10.2.0.11' }, { type: 'Hostname', address: computerName(7) }, { type: 'ExternalIP', address: '20.60.0.11' }]);
    // The scale sets, their instances, their NICs, their public IPs; and the VMs, since a name may be a standalone VM.
    expect({ scaleSets: emu.count('scaleSets'), scaleSetVMs: emu.count('scaleSetVMs'), scaleSetNics: emu.count('scaleSetNics'), scaleSetPips: emu.count('scaleSetPips'), vms: emu.count('vms') })
      .toEqual({ scaleSets: 1, scaleSetVMs: 1, scaleSetNics: 1, scaleSetPips: 1, vms: 1 });

    emu.reset();
    const vms = Array.from({ length: 500 }, (_, i) => ({ name: `vm-${i + 500}`, providerID: vmPID(`vm-${i + 500}`) }));
    const res2 = await azure.instancesMetadata(vms);
    expect([...res2.values()].every((r) => r.kind === 'found')).toBe(true);
    const v = res2.get('vm-501');
    expect(v?.kind === 'found' && v.value.zone).toBe(String(501 % 3));
    // VMs, power states (for the fault domains), NICs; no public IP is referenced, so none is listed.
    expect({ vms: emu.count('vms'), vmStatuses: emu.count('vmStatuses'), nics: emu.count('nics'), all: emu.armCalls }).toEqual({ vms: 1, vmStatuses: 1, nics: 1, all: 3 });
  });

  it('the second batch of a resync reuses the first one\'s listings', async () => {
    const azure = await build();
    emu.reset();
    for (let b = 0; b < N; b += 500) {
      const batch = Array.from({ length: 500 }, (_, i) => ({ name: computerName(b + i), providerID: ssPID(b + i) }));
      const res = await azure.instancesMetadata(batch);
      expect([...res.values()].every((r) => r.kind === 'found')).toBe(true);
    }
    expect(emu.armCalls).toBeLessThanOrEqual(3);
  });
});
