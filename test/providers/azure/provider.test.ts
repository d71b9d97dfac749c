// The azure adapter against the ARM emulator, built the way the CLI builds it (from an azure.json)
// with a real @azure/identity credential: workload identity (a token file exchanged at the
// emulated AAD tenant found through the ARM endpoint's metadata), a user-assigned managed identity
// (the emulated IMDS), a client secret. The only test seam is trust in the emulator's certificate.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AzureEmulator, type EmulatedScaleSetVM, type EmulatedVM } from '../../emulators/azure/server.js';
import { AZURE_LISTING_MAX_AGE_MS, createAzureProvider, ThrottleGate, type AzureFactoryOptions, type AzureProvider } from '../../../providers/azure/index.js';
import type { InstanceResult, NodeRef } from '../../../providers/types.js';

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => readFileSync(path.join(fixtures, name));
/** The x5t#S256 header value of a certificate: its SHA-256 thumbprint, base64url. */
const x5tS256 = (pem: Buffer) => createHash('sha256').update(Buffer.from(pem.toString().replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, ''), 'base64')).digest('base64url');

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
    // As cloud-provider-azure: the primary NIC's primary configuration and its public IP, nothing else.
    expect(res['vm-dual']).toMatchObject({ addresses: [{ type: 'InternalIP', address: '10.3.0.4' }, { type: 'Hostname', address: 'vm-dual' }, { type: 'ExternalIP', address: '20.50.0.4' }] });
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

  it('dual-stack: the primary NIC\'s IPv6 configuration and its public IP, in the configured family order; every configuration only with nodeIPConfigurations all', async () => {
    const v4first = await provider({ nodeIPFamilies: ['IPv4', 'IPv6'] });
    const v6first = await provider({ nodeIPFamilies: ['IPv6', 'IPv4'] });
    const all = await provider({ nodeIPFamilies: ['IPv4', 'IPv6'], nodeIPConfigurations: 'all' });
    const addrs = (r: unknown) => (r as { addresses: { type: string; address: string }[] }).addresses.map((x) => `${x.type} ${x.address}`);
    const of = async (p: AzureProvider) => addrs(summarise(await p.instancesMetadata([{ name: 'vm-dual' }]))['vm-dual']);
    expect(await of(v4first)).toEqual(['InternalIP 10.3.0.4', 'InternalIP fd00:10:3::4', 'Hostname vm-dual', 'ExternalIP 20.50.0.4', 'ExternalIP 2603:1020::4']);
    expect(await of(v6first)).toEqual(['InternalIP fd00:10:3::4', 'InternalIP 10.3.0.4', 'Hostname vm-dual', 'ExternalIP 2603:1020::4', 'ExternalIP 20.50.0.4']);
    expect(await of(all)).toEqual(['InternalIP 10.3.0.4', 'InternalIP 10.3.0.9', 'InternalIP fd00:10:3::4', 'Hostname vm-dual', 'ExternalIP 20.50.0.4', 'ExternalIP 2603:1020::4']);
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

  it('an instance whose NICs name no primary (which ARM refuses to create) is an error for that node only', async () => {
    const azure = await provider();
    emu.addVM(SUB, RG, vm('vm-new', 11, { nics: [{ name: 'n1', primary: false, ipConfigs: [{ privateIP: '10.5.0.1' }] }, { name: 'n2', primary: false, ipConfigs: [{ privateIP: '10.5.0.2' }] }] }));
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

  it('zones: a scale-set instance (uniform or flexible) with neither zone nor fault domain is an error for its node; a standalone VM is "0"', async () => {
    const azure = await provider();
    emu.addScaleSetVM(SUB, RG, POOL, inst(5, { zones: undefined, faultDomain: null }));
    emu.addVM(SUB, RG, vm('vm-new', 13, { zones: undefined, faultDomain: null }));
    emu.addVM(SUB, RG, vm('vm-stopped', 14, { zones: undefined, faultDomain: null, scaleSet: 'flex' }));
    const res = summarise(await azure.instancesMetadata([{ name: 'ss-5', providerID: ssPID(5) }, { name: 'vm-new' }, { name: 'vm-stopped' }, { name: 'vm-b' }]));
    expect(res['ss-5']).toMatch(/^error: azure: node ss-5: failed to get zone info/);
    expect(res['vm-stopped']).toMatch(/^error: azure: node vm-stopped: failed to get zone info/);
    expect(res['vm-new']).toMatchObject({ zone: '0', region: 'westeurope' });
    expect(res['vm-b']).toMatchObject({ zone: '2' });
  });

  it('a standalone VM missing from a reused run-time listing is retried, never given zone "0"', async () => {
    let clock = 5_000_000;
    const azure = await provider({}, { listingMaxAgeMs: AZURE_LISTING_MAX_AGE_MS, now: () => clock });
    expect(summarise(await azure.instancesMetadata([{ name: 'vm-b' }]))['vm-b']).toMatchObject({ zone: '2' });
    // Created after the subscription's run-time listing: the VM listing is made afresh (the node
    // was not found in the reused one), the run-time listing is still the old one.
    emu.addVM(SUB, RG, vm('vm-new', 15, { zones: undefined, faultDomain: 1 }));
    clock += 1_000;
    expect(summarise(await azure.instancesMetadata([{ name: 'vm-new' }]))['vm-new']).toMatch(/^error: azure: node vm-new: VM vm-new has no run-time view in the subscription's listing yet/);
    clock += AZURE_LISTING_MAX_AGE_MS + 1;
    expect(summarise(await azure.instancesMetadata([{ name: 'vm-new' }]))['vm-new']).toMatchObject({ zone: '1' });
  });

  it('disableAvailabilitySetNodes with vmType standard: the provider is not built, with cloud-provider-azure\'s reason', async () => {
    await expect(provider({ vmType: 'standard', disableAvailabilitySetNodes: true })).rejects.toThrow("disableAvailabilitySetNodes: true is only supported when vmType is 'vmss' (it is 'standard')");
  });

  it.each([
    ['PEM', 'client.pem', undefined],
    ['PKCS#12 as OpenSSL 1.x and Windows write it', 'client-legacy.pfx', 'pfx-password'],
    ['PKCS#12 as OpenSSL 3 writes it', 'client-aes.pfx', 'pfx-password'],
  ])('a client certificate (%s): a signed client assertion AAD accepts', async (_name, file, password) => {
    emu.registerCertificate(emu.clientId, fixture('client.crt').toString());
    const certPath = path.join(dir, file);
    await writeFile(certPath, fixture(file));
    const azure = await provider({ useFederatedWorkloadIdentityExtension: false, aadClientCertPath: certPath, ...(password ? { aadClientCertPassword: password } : {}) });
    expect(summarise(await azure.instancesExist([{ name: 'vm-a' }]))).toEqual({ 'vm-a': true });
    const tokens = emu.requests.filter((r) => r.kind === 'token');
    expect(tokens).toHaveLength(1);
    const { header, payload } = tokens[0]!.assertion!;
    // What the emulated AAD checked: the thumbprint header of the registered certificate, the chain
    // sent as x5c (cloud-provider-azure's SendCertificateChain), this token endpoint, the client.
    expect(header).toMatchObject({ alg: 'PS256', 'x5t#S256': x5tS256(fixture('client.crt')) });
    expect(header.x5c).toEqual([fixture('client.crt').toString().replace(/-----(BEGIN|END) CERTIFICATE-----|\s/g, '')]);
    expect(payload).toMatchObject({ aud: `${emu.url}/${emu.tenantId}/oauth2/v2.0/token`, iss: emu.clientId, sub: emu.clientId });
    expect(tokens[0]!.form).toMatchObject({ client_id: emu.clientId, grant_type: 'client_credentials', client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' });
  });

  it('a client certificate AAD does not know fails every node as retryable; a bad file stops the provider from being built', async () => {
    const rotated = path.join(dir, 'unregistered.pfx');
    await writeFile(rotated, fixture('rotated-nopass.pfx'));
    const azure = await provider({ useFederatedWorkloadIdentityExtension: false, aadClientCertPath: rotated }, { maxRetries: 0 });
    expect(summarise(await azure.instancesExist([{ name: 'vm-a' }]))['vm-a']).toMatch(/^error: .*AADSTS700027: The certificate with identifier used to sign the client assertion is not registered on application/);
    const wrong = path.join(dir, 'client-legacy.pfx');
    await writeFile(wrong, fixture('client-legacy.pfx'));
    await expect(provider({ useFederatedWorkloadIdentityExtension: false, aadClientCertPath: wrong, aadClientCertPassword: 'nope' }))
      .rejects.toThrow(`azure: aadClientCertPath ${wrong}: neither PEM nor a readable PKCS#12 file: the password is wrong or the file is damaged (its MAC does not verify)`);
    await expect(provider({ useFederatedWorkloadIdentityExtension: false, aadClientCertPath: path.join(dir, 'absent.pem') }))
      .rejects.toThrow(/^azure: aadClientCertPath: reading .*absent\.pem failed: ENOENT/);
  });

  it('aadMSIDataPlaneIdentityPath: the identity\'s certificate at its authority; a newer file replaces it, an older one does not', async () => {
    const msiClient = '77777777-8888-9999-aaaa-bbbbbbbbbbbb';
    emu.registerCertificate(msiClient, fixture('client.crt').toString());
    const msiDir = await mkdtemp(path.join(dir, 'msi-'));
    const file = path.join(msiDir, 'identity.json');
    const identity = (pfx: string, notBefore: string) => JSON.stringify({
      authentication_endpoint: `${emu.url}/`, client_id: msiClient, tenant_id: emu.tenantId, object_id: 'cccccccc-0000-0000-0000-000000000000',
      resource_id: `/subscriptions/${SUB}/resourcegroups/rg/providers/Microsoft.ManagedIdentity/userAssignedIdentities/ccm`,
      client_secret: fixture(pfx).toString('base64'), client_secret_url: 'https://control.example/identity', mtls_authentication_endpoint: `${emu.url}/`,
      not_before: notBefore, not_after: '2126-01-01T00:00:00Z', renew_after: '2100-01-01T00:00:00Z', cannot_renew_after: '2125-01-01T00:00:00Z',
    });
    await writeFile(file, identity('client-nopass.pfx', '2025-01-01T00:00:00Z'));
    // Tokens that expire within a minute: every call asks for a new one, with the credential in use.
    emu.tokenLifetimeSeconds = 60;
    const azure = await provider({ useFederatedWorkloadIdentityExtension: false, aadMSIDataPlaneIdentityPath: file }, { maxRetries: 0 });
    expect(summarise(await azure.instancesExist([{ name: 'vm-a' }]))).toEqual({ 'vm-a': true });
    const first = emu.requests.filter((r) => r.kind === 'token');
    expect(first.length).toBeGreaterThan(0);
    expect(first.every((r) => r.form?.client_id === msiClient && r.assertion?.header['x5t#S256'] === x5tS256(fixture('client.crt')))).toBe(true);
    // msi-dataplane's credential: the certificate chain sent along (x5c).
    expect(first[0]!.assertion!.header.x5c).toHaveLength(1);
    // An older file (as a Secret volume swaps it in: a rename in the directory) changes nothing.
    emu.registerCertificate(msiClient, fixture('rotated.crt').toString());
    await writeFile(`${file}.tmp`, identity('rotated-nopass.pfx', '2024-01-01T00:00:00Z'));
    await rename(`${file}.tmp`, file);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = emu.requests.length;
    expect(summarise(await azure.instancesExist([{ name: 'vm-a' }]))).toEqual({ 'vm-a': true });
    const afterOlder = emu.requests.slice(before).filter((r) => r.kind === 'token');
    expect(afterOlder.length).toBeGreaterThan(0);
    expect(afterOlder.every((r) => r.assertion?.header['x5t#S256'] === x5tS256(fixture('client.crt')))).toBe(true);
    // A newer one is used for the next token.
    await writeFile(`${file}.tmp`, identity('rotated-nopass.pfx', '2025-06-01T00:00:00Z'));
    await rename(`${file}.tmp`, file);
    const rotated = x5tS256(fixture('rotated.crt'));
    const deadline = Date.now() + 5_000;
    while (!emu.requests.some((r) => r.kind === 'token' && r.assertion?.header['x5t#S256'] === rotated) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await azure.instancesExist([{ name: 'vm-a' }]);
    }
    const thumbprints = emu.requests.filter((r) => r.kind === 'token').map((r) => r.assertion?.header['x5t#S256']);
    expect(thumbprints[0]).toBe(x5tS256(fixture('client.crt')));
    // Once the newer certificate is in use, the older one never comes back.
    const switched = thumbprints.indexOf(rotated);
    expect(switched).toBeGreaterThan(0);
    expect(thumbprints.slice(switched).every((t) => t === rotated)).toBe(true);
    expect(emu.requests.filter((r) => r.kind === 'token').every((r) => r.form?.client_id === msiClient)).toBe(true);
  });

  it('aadMSIDataPlaneIdentityPath that cannot be read stops the provider from being built, naming the field', async () => {
    const file = path.join(dir, 'msi-bad.json');
    await writeFile(file, JSON.stringify({ client_id: 'x', tenant_id: emu.tenantId, authentication_endpoint: `${emu.url}/`, not_before: '2025-01-01T00:00:00Z' }));
    await expect(provider({ useFederatedWorkloadIdentityExtension: false, aadMSIDataPlaneIdentityPath: file })).rejects.toThrow(`aadMSIDataPlaneIdentityPath ${file}: missing client_secret`);
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

describe('azure provider on Azure Stack Hub (cloud AzureStackCloud)', () => {
  // Azure Stack Hub as the adapter meets it: an ARM metadata entry named AzureStackCloud without
  // resourceManager, its own token audience, and only the API versions it serves.
  const STACK_AUDIENCE = 'https://management.contoso.onmicrosoft.com/4de154de-f8a8-4017-af41-df619da68155';
  const emu = new AzureEmulator({
    cloudName: 'AzureStackCloud', metadataResourceManager: false, audience: STACK_AUDIENCE,
    apiVersions: { virtualMachines: ['2017-12-01'], virtualMachineScaleSets: ['2019-07-01'], network: ['2018-11-01'] },
  });
  let dir = '';
  let tokenFile = '';
  const built: AzureProvider[] = [];

  async function build(config: Record<string, unknown>, env: AzureFactoryOptions['env'] = {}): Promise<AzureProvider> {
    const text = JSON.stringify({
      cloud: 'AzureStackCloud', tenantId: emu.tenantId, subscriptionId: SUB, resourceGroup: RG, vmType: 'vmss',
      useFederatedWorkloadIdentityExtension: true, aadClientId: emu.clientId, aadFederatedTokenFile: tokenFile, ...config,
    });
    const p = await createAzureProvider({ cloudConfig: { path: 'azure.json', text } }, { tlsCA: emu.ca, env, listingMaxAgeMs: 0, retryDelayMs: 10, maxRetries: 0, gate: new ThrottleGate() });
    built.push(p);
    return p;
  }

  beforeAll(async () => {
    await emu.start();
    dir = await mkdtemp(path.join(tmpdir(), 'azure-stack-'));
    tokenFile = path.join(dir, 'token');
    await writeFile(tokenFile, emu.federatedToken);
    emu.addVM(SUB, RG, vm('vm-a', 1, { zones: undefined, faultDomain: 1 }));
    emu.addScaleSet(SUB, RG, { name: POOL, computerNamePrefix: POOL });
    emu.addScaleSetVM(SUB, RG, POOL, inst(0, { zones: undefined, nics: [{ name: 'nic0', ipConfigs: [{ privateIP: '10.2.0.4', publicIP: '20.60.0.4' }] }] }));
  });
  afterAll(async () => {
    for (const p of built) await p.close();
    await emu.stop();
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => emu.reset());

  it('the endpoints from resourceManagerEndpoint\'s metadata, and each call with Azure Stack Hub\'s API version', async () => {
    const azure = await build({ resourceManagerEndpoint: emu.url });
    const res = summarise(await azure.instancesMetadata([{ name: 'vm-a' }, { name: computerName(0), providerID: ssPID(0) }]));
    expect(res['vm-a']).toMatchObject({ providerID: vmPID('vm-a'), zone: '1', addresses: [{ type: 'InternalIP', address: '10.1.0.5' }, { type: 'Hostname', address: 'vm-a' }] });
    expect(res[computerName(0)]).toMatchObject({ zone: '0', addresses: [{ type: 'InternalIP', address: '10.2.0.4' }, { type: 'Hostname', address: computerName(0) }, { type: 'ExternalIP', address: '20.60.0.4' }] });
    const metadata = emu.requests.filter((r) => r.kind === 'metadata');
    expect(metadata.map((r) => r.query['api-version'])).toEqual(['2019-05-01']);
    // The token was asked for the cloud's own audience.
    expect(emu.requests.filter((r) => r.kind === 'token').map((r) => r.form?.scope)).toEqual([`${STACK_AUDIENCE}/.default`]);
    const versions = Object.fromEntries(['vms', 'vmStatuses', 'scaleSets', 'scaleSetVMs', 'nics', 'scaleSetNics', 'scaleSetPips']
      .map((k) => [k, [...new Set(emu.requests.filter((r) => r.kind === k).map((r) => r.query['api-version']))]]));
    expect(versions).toEqual({
      vms: ['2017-12-01'], vmStatuses: ['2017-12-01'], scaleSets: ['2019-07-01'], scaleSetVMs: ['2019-07-01'], nics: ['2018-11-01'], scaleSetNics: ['2018-11-01'], scaleSetPips: ['2018-11-01'],
    });
    expect(emu.requests.filter((r) => r.status >= 400)).toEqual([]);
  });

  it('disableAzureStackCloud: the SDK\'s own API versions, which Azure Stack Hub refuses (each node a retryable error)', async () => {
    const azure = await build({ resourceManagerEndpoint: emu.url, disableAzureStackCloud: true });
    const res = summarise(await azure.instancesExist([{ name: 'vm-a', providerID: vmPID('vm-a') }]));
    expect(res['vm-a']).toMatch(/^error: azure: node vm-a: listing the VMs of resource group k8s-nodes failed: NoRegisteredProviderFound, HTTP 400/);
  });

  it('AZURE_ENVIRONMENT_FILEPATH instead of resourceManagerEndpoint, as cloud-provider-azure reads it', async () => {
    const file = path.join(dir, 'azurestackcloud.json');
    await writeFile(file, JSON.stringify({ name: 'AzureStackCloud', resourceManagerEndpoint: `${emu.url}/`, activeDirectoryEndpoint: `${emu.url}/`, tokenAudience: STACK_AUDIENCE, storageEndpointSuffix: 'local.azurestack.external' }));
    const azure = await build({}, { AZURE_ENVIRONMENT_FILEPATH: file });
    expect(summarise(await azure.instancesExist([{ name: 'vm-a' }]))).toEqual({ 'vm-a': true });
    expect(emu.count('metadata')).toBe(0);
  });

  it('a metadata answer that names no AzureStackCloud: the provider is not built (upstream would go on with the public cloud\'s endpoints)', async () => {
    const other = new AzureEmulator({ cloudName: 'AzureCloud' });
    await other.start();
    try {
      const text = JSON.stringify({ cloud: 'AzureStackCloud', subscriptionId: SUB, resourceGroup: RG, useManagedIdentityExtension: true, resourceManagerEndpoint: other.url });
      await expect(createAzureProvider({ cloudConfig: { path: 'azure.json', text } }, { tlsCA: other.ca, env: {} }))
        .rejects.toThrow(/^azure: cloud AzureStackCloud: the metadata of https:\/\/127\.0\.0\.1:\d+\/ names its resourceManager, authorityHost, audience \(.*names no cloud "AzureStackCloud" \(it names "AzureCloud"\)/);
    } finally {
      await other.stop();
    }
  });
});
