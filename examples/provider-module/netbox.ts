// An adapter written outside node-address-ccm: nodes from a NetBox virtual-machines export, as
// `GET /api/virtualization/virtual-machines/?limit=0` returns it, saved to a file (a CronJob or a
// git sync keeps it current). Loaded with:
//   node-address-ccm run --cloud-provider-module ./netbox.js --cloud-provider netbox --cloud-config vms.json
// The export is read again when the file changes, checked by its stat on each call.
import { readFile, stat } from 'node:fs/promises';
import {
  defineProvider, found, notFound, retryableError,
  type CloudProvider, type InstanceMetadata, type InstanceResult, type NodeAddress, type NodeRef,
} from 'node-address-ccm/provider';

/** The fields of a NetBox virtual machine this adapter reads. */
export interface NetBoxVM {
  id: number;
  name: string;
  status?: { value: string };
  site?: { slug: string } | null;
  cluster?: { name: string } | null;
  role?: { slug: string } | null;
  primary_ip4?: { address: string } | null;
  primary_ip6?: { address: string } | null;
  custom_fields?: { region?: string | null } | null;
}

const PREFIX = 'netbox://';

/** NetBox keeps interface addresses with their prefix length ("10.0.0.5/24"); a node address has none. */
const hostOf = (cidr: string): string => cidr.split('/')[0] as string;

/** What node-address-ccm gets for one VM: the primary IPv4 first, then the IPv6, then the name. */
export function vmMetadata(vm: NetBoxVM): InstanceMetadata {
  const addresses: NodeAddress[] = [];
  if (vm.primary_ip4) addresses.push({ type: 'InternalIP', address: hostOf(vm.primary_ip4.address) });
  if (vm.primary_ip6) addresses.push({ type: 'InternalIP', address: hostOf(vm.primary_ip6.address) });
  addresses.push({ type: 'Hostname', address: vm.name });
  return {
    providerID: `${PREFIX}${vm.id}`,
    addresses,
    ...(vm.site ? { zone: vm.site.slug } : {}),
    ...(vm.custom_fields?.region ? { region: vm.custom_fields.region } : {}),
    ...(vm.role ? { instanceType: vm.role.slug } : {}),
    ...(vm.cluster ? { labels: { 'netbox.example.com/cluster': vm.cluster.name } } : {}),
  };
}

/** The VMs of an export, by id and by name; a document that is not one throws. */
export function parseExport(text: string): { byId: Map<number, NetBoxVM>; byName: Map<string, NetBoxVM> } {
  const doc = JSON.parse(text) as { results?: unknown };
  if (!Array.isArray(doc.results)) throw new Error('not a NetBox list: no "results" array');
  const byId = new Map<number, NetBoxVM>();
  const byName = new Map<string, NetBoxVM>();
  for (const vm of doc.results as NetBoxVM[]) {
    if (typeof vm?.id !== 'number' || typeof vm.name !== 'string') throw new Error(`results: an entry without a numeric id and a name (${JSON.stringify(vm).slice(0, 80)})`);
    byId.set(vm.id, vm);
    byName.set(vm.name, vm);
  }
  return { byId, byName };
}

class NetBoxProvider implements CloudProvider {
  readonly name = 'netbox';
  #cache: { key: string; vms: ReturnType<typeof parseExport> } | undefined;

  constructor(readonly file: string) {}

  async #vms(): Promise<ReturnType<typeof parseExport>> {
    const s = await stat(this.file);
    const key = `${s.ino}:${s.size}:${s.mtimeMs}`;
    if (this.#cache?.key !== key) this.#cache = { key, vms: parseExport(await readFile(this.file, 'utf8')) };
    return this.#cache.vms;
  }

  /** One read of the export answers the whole batch; a read that fails is an error for every node, never "not found". */
  async #each<T>(nodes: readonly NodeRef[], answer: (vm: NetBoxVM | undefined, node: NodeRef) => InstanceResult<T>): Promise<Map<string, InstanceResult<T>>> {
    const out = new Map<string, InstanceResult<T>>();
    let vms: ReturnType<typeof parseExport>;
    try {
      vms = await this.#vms();
    } catch (err) {
      for (const n of nodes) out.set(n.name, retryableError(new Error(`netbox export ${this.file}: ${(err as Error).message}`)));
      return out;
    }
    for (const n of nodes) {
      if (n.providerID && !n.providerID.startsWith(PREFIX)) {
        out.set(n.name, retryableError(new Error(`providerID ${n.providerID} is not a NetBox one`)));
        continue;
      }
      const id = n.providerID ? Number(n.providerID.slice(PREFIX.length)) : undefined;
      out.set(n.name, answer(id !== undefined ? vms.byId.get(id) : vms.byName.get(n.name), n));
    }
    return out;
  }

  instancesMetadata(nodes: readonly NodeRef[]) {
    return this.#each<InstanceMetadata>(nodes, (vm, n) => (vm ? found(vmMetadata(vm)) : notFound(`no virtual machine ${n.providerID ?? n.name} in the NetBox export`)));
  }

  instancesExist(nodes: readonly NodeRef[]) {
    return this.#each<boolean>(nodes, (vm) => found(vm !== undefined));
  }

  /** NetBox's "offline" is a powered-off machine; "decommissioning" still runs until it is deleted. */
  instancesShutdown(nodes: readonly NodeRef[]) {
    return this.#each<boolean>(nodes, (vm) => (vm ? found(vm.status?.value === 'offline') : notFound<boolean>()));
  }
}

export default defineProvider({
  name: 'netbox',
  cloudConfig: 'required',
  cloudConfigHint: 'a NetBox virtual-machines export (JSON with "results")',
  timeoutSeconds: 30,
  async create(context) {
    const file = context.cloudConfig!;
    parseExport(file.text); // a bad export is named at start, not at the first node
    return new NetBoxProvider(file.path);
  },
});
