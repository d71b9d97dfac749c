// A loopback emulator of the Azure Resource Manager read API the azure adapter calls, speaking the
// REST wire format (resources with `properties`, `value`/`nextLink` pages, CloudError bodies) so
// tests drive the real @azure/arm-compute and @azure/arm-network clients; and of the token
// endpoints @azure/identity talks to, so its real credentials get the tokens ARM checks:
//   - HTTPS (self-signed; trust `ca`): ARM, the cloud's /metadata/endpoints (a list of clouds, as
//     ARM answers api-version 2019-05-01), and an AAD tenant's OpenID configuration and token
//     endpoint (workload identity's federated token, a client secret, and a certificate's client
//     assertion: a JWT whose x5t or x5t#S256 names a registered certificate, signed by its key, for
//     this token endpoint, issued by and about the client);
//   - HTTP: IMDS's /metadata/identity/oauth2/token (managed identity; AZURE_POD_IDENTITY_AUTHORITY_HOST).
// State: VMs, uniform and flexible scale sets and their instances, NICs (primary flags on the VM's
// references and on the NICs, one primary IP configuration each, privateIPAddressVersion), public
// IPs, zones, fault domains, power and provisioning states, in the shapes ARM returns. Faults: 429
// with Retry-After, other statuses, outages; an Azure Stack Hub mode that serves only its API
// versions. Resources with an ambiguous primary (which ARM refuses to create) can still be made,
// to test the adapter's refusal to guess.
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { constants, createHash, randomBytes, randomUUID, verify, X509Certificate } from 'node:crypto';
import { selfSignedCertificate } from '../../../src/serving/certificate.js';

export interface EmulatedIPConfig {
  name?: string;
  /** Unset on every configuration of a NIC: the first is primary, as ARM makes it. */
  primary?: boolean;
  privateIP: string;
  /** The address of a public IP attached to this configuration ('' = attached, not allocated yet). */
  publicIP?: string;
}

export interface EmulatedNic {
  name: string;
  /** Unset on every NIC of an instance: the first is primary, as ARM requires one. */
  primary?: boolean;
  /** For a standalone VM's NIC: its resource group, default the VM's. */
  resourceGroup?: string;
  ipConfigs: EmulatedIPConfig[];
}

export interface EmulatedInstance {
  location?: string;
  zones?: string[];
  size?: string;
  /** running (default), stopped, deallocated, deallocating, starting, stopping… */
  powerState?: string;
  /** Succeeded (default), Creating, Updating, Deleting… */
  provisioningState?: string;
  /** Platform fault domain of the instance view; default 0, null for none. */
  faultDomain?: number | null;
  nics: EmulatedNic[];
}

export interface EmulatedVM extends EmulatedInstance {
  name: string;
  /** A flexible scale set it belongs to. */
  scaleSet?: string;
}

export interface EmulatedScaleSetVM extends EmulatedInstance {
  instanceId: string;
  /** Default: the scale set's prefix and the instance ID in base 36, six characters. */
  computerName?: string;
}

export interface EmulatedScaleSet {
  name: string;
  location?: string;
  size?: string;
  computerNamePrefix?: string;
  orchestrationMode?: 'Uniform' | 'Flexible';
}

export type RequestKind = 'vms' | 'vmStatuses' | 'scaleSets' | 'scaleSetVMs' | 'nics' | 'scaleSetNics' | 'pips' | 'scaleSetPips' | 'metadata' | 'openid' | 'token' | 'imds' | 'other';

/** What a certificate's client assertion held, for tests to check its shape. */
export interface RecordedAssertion {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

export interface RecordedRequest {
  kind: RequestKind;
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  /** Items on the page answered. */
  returned: number;
  /** When it arrived (Date.now()). */
  at: number;
  /** A token request's form fields (client_assertion and client_secret left out). */
  form?: Record<string, string>;
  /** A token request's verified certificate assertion. */
  assertion?: RecordedAssertion;
}

export interface AzureEmulatorOptions {
  /** Items per list page. Default 1000. */
  pageSize?: number;
  tenantId?: string;
  /** The app registration workload identity and client secrets authenticate as. */
  clientId?: string;
  /** The federated token the workload identity token file must hold. */
  federatedToken?: string;
  clientSecret?: string;
  /** The user-assigned identity IMDS serves (any client_id is refused otherwise). */
  managedIdentityClientId?: string;
  /** The `name` of the metadata endpoint's entry; default AzureCloud, as public ARM names its own. */
  cloudName?: string;
  /** Whether that entry names `resourceManager` (Azure Stack Hub's may not); default true. */
  metadataResourceManager?: boolean;
  /** The audience of ARM tokens (the entry's audiences[0]); default https://management.core.windows.net/. */
  audience?: string;
  /** Azure Stack Hub: the only API versions served (others get 400 NoRegisteredProviderFound). */
  apiVersions?: { virtualMachines: string[]; virtualMachineScaleSets: string[]; network: string[] };
}

type Json = Record<string, unknown>;

interface Stored {
  id: string;
  body: Json;
  /** Sort key within its list. */
  name: string;
}

const ARM_AUDIENCE = 'https://management.core.windows.net/';

const base64url = (b: Buffer | string) => Buffer.from(b).toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

function rid(sub: string, rg: string, rest: string): string {
  return `/subscriptions/${sub}/resourceGroups/${rg}/providers/${rest}`;
}

export class AzureEmulator {
  readonly requests: RecordedRequest[] = [];
  /** How long the tokens issued are valid (expires_in); short ones make clients ask again soon. */
  tokenLifetimeSeconds = 3599;
  readonly ca: string;
  private readonly key: string;
  private readonly pageSize: number;
  readonly tenantId: string;
  readonly clientId: string;
  readonly federatedToken: string;
  readonly clientSecret: string;
  readonly managedIdentityClientId: string;
  readonly audience: string;
  private readonly cloudName: string;
  private readonly metadataResourceManager: boolean;
  private readonly apiVersions?: AzureEmulatorOptions['apiVersions'];
  /** Client ID → the certificates registered on its application. */
  private readonly certificates = new Map<string, X509Certificate[]>();
  /** Lower-case collection path ("/subscriptions/s/resourcegroups/rg/providers/microsoft.compute/virtualmachines") → id → resource. */
  private readonly collections = new Map<string, Map<string, Stored>>();
  /** VM id (lower) → its run-time view, for statusOnly and $expand=instanceView. */
  private readonly instanceViews = new Map<string, Json>();
  private readonly tokens = new Set<string>();
  private faults: { status: number; retryAfter?: string; message: string }[] = [];
  private outage?: number;
  private https?: HttpsServer;
  private imds?: HttpServer;

  constructor(options: AzureEmulatorOptions = {}) {
    const pair = selfSignedCertificate({ commonName: 'azure-emulator', hosts: ['127.0.0.1', 'localhost'] });
    this.ca = pair.cert;
    this.key = pair.key;
    this.pageSize = options.pageSize ?? 1000;
    this.tenantId = options.tenantId ?? '72f988bf-86f1-41af-91ab-2d7cd011db47';
    this.clientId = options.clientId ?? '11111111-2222-3333-4444-555555555555';
    this.federatedToken = options.federatedToken ?? `federated-${randomBytes(8).toString('hex')}`;
    this.clientSecret = options.clientSecret ?? `secret-${randomBytes(8).toString('hex')}`;
    this.managedIdentityClientId = options.managedIdentityClientId ?? '66666666-7777-8888-9999-000000000000';
    this.audience = options.audience ?? ARM_AUDIENCE;
    this.cloudName = options.cloudName ?? 'AzureCloud';
    this.metadataResourceManager = options.metadataResourceManager ?? true;
    this.apiVersions = options.apiVersions;
  }

  /** Registers a certificate (PEM) on an application: its client assertions are then accepted. */
  registerCertificate(clientId: string, pem: string): void {
    const list = this.certificates.get(clientId) ?? [];
    list.push(new X509Certificate(pem));
    this.certificates.set(clientId, list);
  }

  /** ARM's token audiences (the configured one, public ARM's two), with or without the trailing slash. */
  private isArmAudience(resource: string): boolean {
    const r = resource.replace(/\/+$/, '');
    return [this.audience, ARM_AUDIENCE, 'https://management.azure.com'].some((a) => a.replace(/\/+$/, '') === r);
  }

  get url(): string {
    const addr = this.https?.address() as AddressInfo | null;
    if (!addr) throw new Error('AzureEmulator: not started');
    return `https://127.0.0.1:${addr.port}`;
  }

  get imdsUrl(): string {
    const addr = this.imds?.address() as AddressInfo | null;
    if (!addr) throw new Error('AzureEmulator: not started');
    return `http://127.0.0.1:${addr.port}`;
  }

  async start(): Promise<void> {
    this.https = createHttpsServer({ cert: this.ca, key: this.key }, (req, res) => void this.handle(req, res));
    this.imds = createHttpServer((req, res) => this.handleImds(req, res));
    await Promise.all([
      new Promise<void>((resolve) => this.https!.listen(0, '127.0.0.1', resolve)),
      new Promise<void>((resolve) => this.imds!.listen(0, '127.0.0.1', resolve)),
    ]);
  }

  async stop(): Promise<void> {
    for (const server of [this.https, this.imds]) {
      if (!server) continue;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    this.https = undefined;
    this.imds = undefined;
  }

  // --- state -----------------------------------------------------------------------------------

  private collection(path: string): Map<string, Stored> {
    const key = path.toLowerCase();
    let c = this.collections.get(key);
    if (!c) this.collections.set(key, (c = new Map()));
    return c;
  }

  private put(collectionPath: string, id: string, name: string, body: Json): void {
    this.collection(collectionPath).set(id.toLowerCase(), { id, name, body: { id, name, ...body } });
  }

  private nicsAndPips(sub: string, instance: EmulatedInstance, scope: { rg: string; scaleSetPath?: string; vmName: string; vmID: string }): { refs: Json[] } {
    const refs: Json[] = [];
    // ARM keeps one primary NIC per VM and one primary configuration per NIC; unset flags default so.
    const nicFlagged = instance.nics.some((n) => n.primary !== undefined);
    for (const [n, nic] of instance.nics.entries()) {
      const nicPrimary = nicFlagged ? nic.primary === true : n === 0;
      const nicRG = nic.resourceGroup ?? scope.rg;
      const nicID = scope.scaleSetPath
        ? `${scope.scaleSetPath}/networkInterfaces/${nic.name}`
        : rid(sub, nicRG, `Microsoft.Network/networkInterfaces/${nic.name}`);
      const configFlagged = nic.ipConfigs.some((c) => c.primary !== undefined);
      const configs = nic.ipConfigs.map((c, i) => {
        const cname = c.name ?? `ipconfig${i + 1}`;
        const configID = `${nicID}/ipConfigurations/${cname}`;
        const props: Json = {
          provisioningState: 'Succeeded',
          privateIPAddress: c.privateIP,
          privateIPAllocationMethod: 'Dynamic',
          subnet: { id: rid(sub, scope.rg, 'Microsoft.Network/virtualNetworks/vnet/subnets/nodes') },
          primary: configFlagged ? c.primary === true : i === 0,
          privateIPAddressVersion: c.privateIP.includes(':') ? 'IPv6' : 'IPv4',
        };
        if (c.publicIP !== undefined) {
          const pipName = `${nic.name}-${cname}-pip`;
          const pipID = scope.scaleSetPath
            ? `${configID}/publicIPAddresses/${pipName}`
            : rid(sub, nicRG, `Microsoft.Network/publicIPAddresses/${pipName}`);
          props.publicIPAddress = { id: pipID };
          const pipProps: Json = {
            provisioningState: 'Succeeded', publicIPAddressVersion: c.publicIP.includes(':') ? 'IPv6' : 'IPv4', publicIPAllocationMethod: 'Static',
            idleTimeoutInMinutes: 4, ipTags: [], ipConfiguration: { id: configID },
          };
          if (c.publicIP) pipProps.ipAddress = c.publicIP;
          const collection = scope.scaleSetPath ? `${scope.scaleSetPath.replace(/\/virtualMachines\/[^/]+$/, '')}/publicipaddresses` : rid(sub, nicRG, 'Microsoft.Network/publicIPAddresses');
          this.put(collection, pipID, pipName, {
            type: 'Microsoft.Network/publicIPAddresses', location: instance.location ?? 'westeurope', sku: { name: 'Standard', tier: 'Regional' },
            ...(instance.zones ? { zones: instance.zones } : {}), properties: pipProps,
          });
        }
        return { id: configID, name: cname, etag: `W/"${randomUUID()}"`, type: 'Microsoft.Network/networkInterfaces/ipConfigurations', properties: props };
      });
      const collection = scope.scaleSetPath ? `${scope.scaleSetPath.replace(/\/virtualMachines\/[^/]+$/, '')}/networkInterfaces` : rid(sub, nicRG, 'Microsoft.Network/networkInterfaces');
      this.put(collection, nicID, nic.name, {
        type: 'Microsoft.Network/networkInterfaces', location: instance.location ?? 'westeurope', kind: 'Regular',
        properties: {
          provisioningState: 'Succeeded', resourceGuid: randomUUID(), ipConfigurations: configs, dnsSettings: { dnsServers: [], appliedDnsServers: [] },
          macAddress: randomBytes(6).toString('hex').toUpperCase().match(/../g)!.join('-'), enableAcceleratedNetworking: true, enableIPForwarding: false,
          primary: nicPrimary, virtualMachine: { id: scope.vmID }, nicType: 'Standard',
        },
      });
      // A VM's reference names its primary NIC; with one NIC ARM may leave the flag out.
      refs.push({ id: nicID, ...(nic.primary !== undefined || instance.nics.length > 1 ? { properties: { primary: nicPrimary } } : {}) });
    }
    return { refs };
  }

  private view(instance: EmulatedInstance): Json {
    return {
      ...(instance.faultDomain === null ? {} : { platformFaultDomain: instance.faultDomain ?? 0 }),
      platformUpdateDomain: 0,
      statuses: [
        { code: `ProvisioningState/${(instance.provisioningState ?? 'Succeeded').toLowerCase()}`, level: 'Info' },
        { code: `PowerState/${instance.powerState ?? 'running'}`, level: 'Info' },
      ],
    };
  }

  /** Adds (or replaces) a standalone VM (or a flexible scale set's VM), its NICs and public IPs. */
  addVM(sub: string, rg: string, vm: EmulatedVM): string {
    const id = rid(sub, rg, `Microsoft.Compute/virtualMachines/${vm.name}`);
    const { refs } = this.nicsAndPips(sub, vm, { rg, vmName: vm.name, vmID: id });
    const props: Json = {
      provisioningState: vm.provisioningState ?? 'Succeeded',
      hardwareProfile: { vmSize: vm.size ?? 'Standard_D2s_v5' },
      osProfile: { computerName: vm.name },
      networkProfile: { networkInterfaces: refs },
    };
    if (vm.scaleSet) props.virtualMachineScaleSet = { id: rid(sub, rg, `Microsoft.Compute/virtualMachineScaleSets/${vm.scaleSet}`) };
    this.put(rid(sub, rg, 'Microsoft.Compute/virtualMachines'), id, vm.name, {
      type: 'Microsoft.Compute/virtualMachines', location: vm.location ?? 'westeurope', ...(vm.zones ? { zones: vm.zones } : {}), properties: props,
    });
    this.instanceViews.set(id.toLowerCase(), this.view(vm));
    return id;
  }

  removeVM(sub: string, rg: string, name: string): void {
    const id = rid(sub, rg, `Microsoft.Compute/virtualMachines/${name}`).toLowerCase();
    this.collection(rid(sub, rg, 'Microsoft.Compute/virtualMachines')).delete(id);
    this.instanceViews.delete(id);
  }

  /** Sets a VM's or scale-set instance's power or provisioning state. */
  setState(id: string, state: { powerState?: string; provisioningState?: string }): void {
    const v = this.instanceViews.get(id.toLowerCase());
    if (!v) throw new Error(`no instance ${id}`);
    const statuses = v.statuses as { code: string }[];
    if (state.powerState) statuses[1] = { code: `PowerState/${state.powerState}` };
    if (state.provisioningState) {
      statuses[0] = { code: `ProvisioningState/${state.provisioningState.toLowerCase()}` };
      for (const c of this.collections.values()) {
        const r = c.get(id.toLowerCase());
        if (r) (r.body.properties as Json).provisioningState = state.provisioningState;
      }
    }
  }

  addScaleSet(sub: string, rg: string, ss: EmulatedScaleSet): void {
    const id = rid(sub, rg, `Microsoft.Compute/virtualMachineScaleSets/${ss.name}`);
    this.put(rid(sub, rg, 'Microsoft.Compute/virtualMachineScaleSets'), id, ss.name, {
      type: 'Microsoft.Compute/virtualMachineScaleSets', location: ss.location ?? 'westeurope',
      sku: { name: ss.size ?? 'Standard_D4s_v5', tier: 'Standard', capacity: 0 },
      properties: {
        orchestrationMode: ss.orchestrationMode ?? 'Uniform',
        ...(ss.orchestrationMode === 'Flexible' ? {} : { virtualMachineProfile: { osProfile: { computerNamePrefix: ss.computerNamePrefix ?? ss.name } } }),
        provisioningState: 'Succeeded',
      },
    });
  }

  removeScaleSet(sub: string, rg: string, name: string): void {
    const base = rid(sub, rg, `Microsoft.Compute/virtualMachineScaleSets/${name}`);
    this.collection(rid(sub, rg, 'Microsoft.Compute/virtualMachineScaleSets')).delete(base.toLowerCase());
    for (const key of [...this.collections.keys()]) if (key.startsWith(`${base.toLowerCase()}/`)) this.collections.delete(key);
  }

  /** Adds (or replaces) an instance of a uniform scale set (added first), its NICs and public IPs. */
  addScaleSetVM(sub: string, rg: string, scaleSet: string, vm: EmulatedScaleSetVM): string {
    const ssID = rid(sub, rg, `Microsoft.Compute/virtualMachineScaleSets/${scaleSet}`);
    const ss = this.collection(rid(sub, rg, 'Microsoft.Compute/virtualMachineScaleSets')).get(ssID.toLowerCase());
    if (!ss) throw new Error(`no scale set ${scaleSet}`);
    const ssBody = ss.body as { location: string; sku: { name: string }; properties: { virtualMachineProfile?: { osProfile: { computerNamePrefix: string } } } };
    const id = `${ssID}/virtualMachines/${vm.instanceId}`;
    const prefix = ssBody.properties.virtualMachineProfile?.osProfile.computerNamePrefix ?? scaleSet;
    const computerName = vm.computerName ?? `${prefix}${Number(vm.instanceId).toString(36).padStart(6, '0')}`;
    const location = vm.location ?? ssBody.location;
    const { refs } = this.nicsAndPips(sub, { ...vm, location }, { rg, scaleSetPath: id, vmName: computerName, vmID: id });
    this.put(`${ssID}/virtualMachines`, id, `${scaleSet}_${vm.instanceId}`, {
      type: 'Microsoft.Compute/virtualMachineScaleSets/virtualMachines', instanceId: vm.instanceId, location,
      sku: { name: vm.size ?? ssBody.sku.name, tier: 'Standard' }, ...(vm.zones ? { zones: vm.zones } : {}),
      properties: { provisioningState: vm.provisioningState ?? 'Succeeded', latestModelApplied: true, osProfile: { computerName }, networkProfile: { networkInterfaces: refs } },
    });
    this.instanceViews.set(id.toLowerCase(), this.view(vm));
    return id;
  }

  removeScaleSetVM(sub: string, rg: string, scaleSet: string, instanceId: string): void {
    const id = rid(sub, rg, `Microsoft.Compute/virtualMachineScaleSets/${scaleSet}/virtualMachines/${instanceId}`);
    this.collection(`${id.replace(/\/[^/]+$/, '')}`).delete(id.toLowerCase());
    this.instanceViews.delete(id.toLowerCase());
  }

  /** The next ARM requests are throttled: 429 with this Retry-After (seconds), one per request. */
  throttleNext(count: number, retryAfterSeconds: number): void {
    for (let i = 0; i < count; i++) this.faults.push({ status: 429, retryAfter: String(retryAfterSeconds), message: 'Number of read requests for subscription exceeded the limit.' });
  }

  /** The next ARM requests fail with these statuses, one per request. */
  failNext(...statuses: number[]): void {
    this.faults.push(...statuses.map((status) => ({ status, message: 'injected failure' })));
  }

  /** Every ARM request fails with this status until cleared with undefined. */
  setOutage(status: number | undefined): void {
    this.outage = status;
  }

  count(...kinds: RequestKind[]): number {
    return this.requests.filter((r) => kinds.includes(r.kind)).length;
  }

  /** ARM calls (list requests of every kind, throttled ones included). */
  get armCalls(): number {
    return this.count('vms', 'vmStatuses', 'scaleSets', 'scaleSetVMs', 'nics', 'scaleSetNics', 'pips', 'scaleSetPips');
  }

  reset(): void {
    this.requests.length = 0;
    this.tokenLifetimeSeconds = 3599;
    this.faults = [];
    this.outage = undefined;
  }

  // --- HTTP ------------------------------------------------------------------------------------

  private send(res: ServerResponse, record: RecordedRequest, status: number, body: unknown, headers: Record<string, string> = {}): void {
    record.status = status;
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'x-ms-request-id': randomBytes(8).toString('hex'), ...headers });
    res.end(JSON.stringify(body));
  }

  private cloudError(res: ServerResponse, record: RecordedRequest, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
    this.send(res, record, status, { error: { code, message } }, headers);
  }

  private issue(): { token: string; expiresIn: number } {
    const token = `emu-${randomBytes(16).toString('hex')}`;
    this.tokens.add(token);
    return { token, expiresIn: this.tokenLifetimeSeconds };
  }

  private async body(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const query = Object.fromEntries(url.searchParams.entries());
    const record: RecordedRequest = { kind: 'other', method: req.method ?? '', path: url.pathname, query, status: 0, returned: 0, at: Date.now() };
    this.requests.push(record);
    const path = url.pathname.replace(/\/+$/, '');
    const lowerPath = path.toLowerCase();

    if (lowerPath === '/metadata/endpoints') {
      record.kind = 'metadata';
      if (!query['api-version']) return this.cloudError(res, record, 400, 'MissingApiVersionParameter', "The api-version query parameter (?api-version=) is required for all requests.");
      return this.send(res, record, 200, [{
        portal: `${this.url}/`, name: this.cloudName, ...(this.metadataResourceManager ? { resourceManager: `${this.url}/` } : {}),
        authentication: { loginEndpoint: `${this.url}/`, audiences: [this.audience, 'https://management.azure.com/'], tenant: 'common', identityProvider: 'AAD' },
        graph: 'https://graph.windows.net/', graphAudience: 'https://graph.windows.net/', suffixes: { storage: 'core.windows.net', keyVaultDns: 'vault.azure.net' },
      }]);
    }
    // AAD: /{tenant}/v2.0/.well-known/openid-configuration and /{tenant}/oauth2/v2.0/token
    const aad = /^\/([^/]+)\/(v2\.0\/\.well-known\/openid-configuration|oauth2\/v2\.0\/token)$/.exec(path);
    if (aad) return this.handleAad(req, res, record, aad[1]!, aad[2]!.startsWith('v2.0') ? 'openid' : 'token');

    if (req.headers.authorization === undefined || !this.tokens.has(req.headers.authorization.replace(/^Bearer /, ''))) {
      return this.cloudError(res, record, 401, 'InvalidAuthenticationToken', 'The access token is missing or invalid.', { 'www-authenticate': `Bearer authorization_uri="${this.url}/${this.tenantId}", error="invalid_token"` });
    }
    const m = /^\/subscriptions\/([^/]+)(?:\/resourcegroups\/([^/]+))?\/providers\/(.+)$/i.exec(path);
    if (!m || req.method !== 'GET') return this.cloudError(res, record, 404, 'NotFound', `No route for ${req.method} ${path}`);
    const [, sub, rg, rest] = m as unknown as [string, string, string | undefined, string];
    const r = rest.toLowerCase();
    if (!rg && r === 'microsoft.compute/virtualmachines') record.kind = 'vmStatuses';
    else if (rg && r === 'microsoft.compute/virtualmachines') record.kind = 'vms';
    else if (rg && r === 'microsoft.compute/virtualmachinescalesets') record.kind = 'scaleSets';
    else if (rg && /^microsoft\.compute\/virtualmachinescalesets\/[^/]+\/virtualmachines$/.test(r)) record.kind = 'scaleSetVMs';
    else if (rg && /^microsoft\.compute\/virtualmachinescalesets\/[^/]+\/networkinterfaces$/.test(r)) record.kind = 'scaleSetNics';
    else if (rg && /^microsoft\.compute\/virtualmachinescalesets\/[^/]+\/publicipaddresses$/.test(r)) record.kind = 'scaleSetPips';
    else if (rg && r === 'microsoft.network/networkinterfaces') record.kind = 'nics';
    else if (rg && r === 'microsoft.network/publicipaddresses') record.kind = 'pips';
    else return this.cloudError(res, record, 404, 'NotFound', `No route for GET ${path}`);
    if (!query['api-version']) return this.cloudError(res, record, 400, 'MissingApiVersionParameter', "The api-version query parameter (?api-version=) is required for all requests.");
    if (this.apiVersions) {
      const network = record.kind === 'nics' || record.kind === 'pips' || record.kind === 'scaleSetNics' || record.kind === 'scaleSetPips';
      const [namespace, type, served] = network ? ['Microsoft.Network', r.includes('publicip') ? 'publicIPAddresses' : 'networkInterfaces', this.apiVersions.network]
        : record.kind === 'vms' || record.kind === 'vmStatuses' ? ['Microsoft.Compute', 'virtualMachines', this.apiVersions.virtualMachines]
          : ['Microsoft.Compute', 'virtualMachineScaleSets', this.apiVersions.virtualMachineScaleSets];
      if (!served.includes(query['api-version'])) {
        return this.cloudError(res, record, 400, 'NoRegisteredProviderFound', `No registered resource provider found for location 'local' and API version '${query['api-version']}' for type '${type}'. The supported api-versions are '${served.join(', ')}'. The supported locations are 'local'. (${namespace})`);
      }
    }

    const fault = this.outage ? { status: this.outage, message: 'service outage' } : this.faults.shift();
    if (fault) {
      const code = fault.status === 429 ? 'TooManyRequests' : fault.status >= 500 ? 'InternalServerError' : 'AuthorizationFailed';
      return this.cloudError(res, record, fault.status, code, fault.message, 'retryAfter' in fault && fault.retryAfter ? { 'retry-after': fault.retryAfter } : {});
    }

    let items: Stored[];
    let expandView = false;
    if (record.kind === 'vmStatuses') {
      if (query.statusOnly !== 'true') return this.cloudError(res, record, 400, 'InvalidParameter', 'the emulator serves the subscription listing with statusOnly=true only');
      items = [...this.collections.entries()].filter(([k]) => /^\/subscriptions\/[^/]+\/resourcegroups\/[^/]+\/providers\/microsoft\.compute\/virtualmachines$/.test(k) && k.startsWith(`/subscriptions/${sub.toLowerCase()}/`))
        .flatMap(([, c]) => [...c.values()]);
    } else {
      if (record.kind === 'vms' && query.$expand && !query.$filter) {
        return this.cloudError(res, record, 400, 'InvalidParameter', "The $expand=instanceView parameter is only allowed with a valid $filter.");
      }
      if (record.kind === 'scaleSetVMs' || record.kind === 'scaleSetNics' || record.kind === 'scaleSetPips') {
        const ssPath = path.replace(/\/[^/]+$/, '');
        if (!this.collection(ssPath.replace(/\/[^/]+$/, '')).has(ssPath.toLowerCase())) {
          return this.cloudError(res, record, 404, 'ResourceNotFound', `The Resource 'Microsoft.Compute/virtualMachineScaleSets/${ssPath.split('/').pop()}' under resource group '${rg}' was not found.`);
        }
        expandView = record.kind === 'scaleSetVMs' && query.$expand === 'instanceView';
      }
      items = [...this.collection(path).values()];
    }
    items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const offset = Number(query.$skiptoken ?? 0);
    const page = items.slice(offset, offset + this.pageSize);
    record.returned = page.length;
    const value = page.map((s) => {
      if (record.kind === 'vmStatuses') return { id: s.id, name: s.name, location: s.body.location, properties: { instanceView: this.instanceViews.get(s.id.toLowerCase()) } };
      if (expandView) return { ...s.body, properties: { ...(s.body.properties as Json), instanceView: this.instanceViews.get(s.id.toLowerCase()) } };
      return s.body;
    });
    const next = offset + page.length < items.length ? new URL(url.pathname, this.url) : undefined;
    if (next) {
      for (const [k, v] of Object.entries(query)) if (k !== '$skiptoken') next.searchParams.set(k, v);
      next.searchParams.set('$skiptoken', String(offset + page.length));
    }
    return this.send(res, record, 200, { value, ...(next ? { nextLink: next.href } : {}) });
  }

  private async handleAad(req: IncomingMessage, res: ServerResponse, record: RecordedRequest, tenant: string, kind: 'openid' | 'token'): Promise<void> {
    record.kind = kind;
    if (tenant !== this.tenantId) return this.send(res, record, 400, { error: 'invalid_tenant', error_description: `AADSTS90002: Tenant '${tenant}' not found.` });
    const base = `${this.url}/${tenant}`;
    if (kind === 'openid') {
      return this.send(res, record, 200, {
        token_endpoint: `${base}/oauth2/v2.0/token`, authorization_endpoint: `${base}/oauth2/v2.0/authorize`, end_session_endpoint: `${base}/oauth2/v2.0/logout`,
        issuer: `${base}/v2.0`, jwks_uri: `${base}/discovery/v2.0/keys`, token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt'],
        response_types_supported: ['code', 'id_token', 'token'], scopes_supported: ['openid'], tenant_region_scope: 'EU',
      });
    }
    const form = new URLSearchParams(await this.body(req));
    record.form = Object.fromEntries([...form].filter(([k]) => k !== 'client_assertion' && k !== 'client_secret'));
    const clientId = form.get('client_id') ?? '';
    const certificates = this.certificates.get(clientId);
    if (clientId !== this.clientId && !certificates) return this.send(res, record, 400, { error: 'unauthorized_client', error_description: `AADSTS700016: Application ${clientId} not found.` });
    if (form.get('grant_type') !== 'client_credentials') return this.send(res, record, 400, { error: 'unsupported_grant_type', error_description: `AADSTS70003: grant_type ${form.get('grant_type')}` });
    const assertion = form.get('client_assertion');
    const secret = form.get('client_secret');
    if (assertion !== null) {
      if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') {
        return this.send(res, record, 400, { error: 'invalid_request', error_description: `AADSTS50027: client_assertion_type ${form.get('client_assertion_type')}` });
      }
      // Workload identity's federated token, or a certificate's signed assertion.
      if (assertion !== this.federatedToken || clientId !== this.clientId) {
        const checked = this.checkCertificateAssertion(assertion, clientId, `${base}/oauth2/v2.0/token`, certificates ?? []);
        if (typeof checked === 'string') return this.send(res, record, 401, { error: 'invalid_client', error_description: checked });
        record.assertion = checked;
      }
    } else if (secret === null || clientId !== this.clientId || secret !== this.clientSecret) {
      return this.send(res, record, 401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.' });
    }
    if (!(form.get('scope') ?? '').split(' ').some((s) => this.isArmAudience(s.replace(/\/?\.default$/, '')))) {
      return this.send(res, record, 400, { error: 'invalid_scope', error_description: `AADSTS70011: scope ${form.get('scope')} is not ARM's` });
    }
    const { token, expiresIn } = this.issue();
    return this.send(res, record, 200, { token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: token });
  }

  /**
   * AAD's checks of a certificate credential's client assertion (RFC 7523): a JWT, RS256 or PS256,
   * whose x5t (SHA-1) or x5t#S256 (SHA-256) thumbprint names a certificate registered on the
   * application and whose signature that certificate's key verifies; x5c, when sent, starting with
   * that certificate; aud the token endpoint, iss and sub the client ID, a jti, and a time window
   * that includes now. Returns the decoded assertion, or AAD's error text.
   */
  private checkCertificateAssertion(jwt: string, clientId: string, tokenEndpoint: string, certificates: X509Certificate[]): RecordedAssertion | string {
    const parts = jwt.split('.');
    if (parts.length !== 3) return 'AADSTS50027: JWT token is invalid or malformed.';
    let header: Record<string, unknown>;
    let payload: Record<string, unknown>;
    try {
      header = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
      payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    } catch {
      return 'AADSTS50027: JWT token is invalid or malformed.';
    }
    if (header.alg !== 'RS256' && header.alg !== 'PS256') return `AADSTS5002738: Invalid JWT token. '${String(header.alg)}' is not a supported signature algorithm.`;
    const thumbprint = (c: X509Certificate, hash: 'sha1' | 'sha256') => base64url(createHash(hash).update(c.raw).digest());
    const cert = typeof header['x5t#S256'] === 'string' ? certificates.find((c) => thumbprint(c, 'sha256') === header['x5t#S256'])
      : typeof header.x5t === 'string' ? certificates.find((c) => thumbprint(c, 'sha1') === header.x5t) : undefined;
    if (!cert) return `AADSTS700027: The certificate with identifier used to sign the client assertion is not registered on application. [Reason - The key was not found., Thumbprint of key used by client: '${String(header['x5t#S256'] ?? header.x5t)}']`;
    const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
    const signature = Buffer.from(parts[2]!, 'base64url');
    const key = header.alg === 'PS256' ? { key: cert.publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 } : cert.publicKey;
    if (!verify('sha256', signed, key, signature)) return 'AADSTS700027: Client assertion failed signature validation.';
    if (header.x5c !== undefined) {
      if (!Array.isArray(header.x5c) || header.x5c.length === 0 || header.x5c[0] !== cert.raw.toString('base64')) return 'AADSTS700027: x5c does not start with the signing certificate.';
    }
    const now = Math.floor(Date.now() / 1000);
    if (payload.aud !== tokenEndpoint) return `AADSTS700016: the assertion's audience ${JSON.stringify(payload.aud)} is not ${tokenEndpoint}`;
    if (payload.iss !== clientId || payload.sub !== clientId) return `AADSTS700021: the assertion's iss and sub must both be ${clientId}`;
    if (typeof payload.jti !== 'string' || payload.jti === '') return 'AADSTS700022: the assertion has no jti.';
    if (typeof payload.exp !== 'number' || payload.exp < now - 300) return 'AADSTS700024: Client assertion is not within its valid time range.';
    if (typeof payload.nbf === 'number' && payload.nbf > now + 300) return 'AADSTS700024: Client assertion is not within its valid time range.';
    return { header, payload };
  }

  private handleImds(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.imdsUrl);
    const query = Object.fromEntries(url.searchParams.entries());
    const record: RecordedRequest = { kind: 'imds', method: req.method ?? '', path: url.pathname, query, status: 0, returned: 0, at: Date.now() };
    this.requests.push(record);
    if (url.pathname.replace(/\/+$/, '') !== '/metadata/identity/oauth2/token') return this.send(res, record, 404, { error: 'not_found' });
    if (req.headers.metadata !== 'true') return this.send(res, record, 400, { error: 'invalid_request', error_description: 'Required metadata header not specified' });
    const clientId = query.client_id;
    if (clientId !== undefined && clientId !== this.managedIdentityClientId) {
      return this.send(res, record, 400, { error: 'invalid_request', error_description: 'Identity not found' });
    }
    const resource = query.resource ?? '';
    if (!this.isArmAudience(resource)) return this.send(res, record, 400, { error: 'invalid_resource', error_description: `resource ${resource}` });
    const { token, expiresIn } = this.issue();
    const now = Math.floor(Date.now() / 1000);
    return this.send(res, record, 200, {
      access_token: token, client_id: clientId ?? this.managedIdentityClientId, expires_in: String(expiresIn), expires_on: String(now + expiresIn),
      ext_expires_in: String(expiresIn), not_before: String(now), resource, token_type: 'Bearer',
    });
  }
}
