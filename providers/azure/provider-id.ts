// azure://<ARM resource ID> — the providerID cloud-provider-azure gives a node:
//   azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachines/<name>
//   azure:///subscriptions/<sub>/resourceGroups/<rg>/providers/Microsoft.Compute/virtualMachineScaleSets/<set>/virtualMachines/<instance-id>
// ARM resource IDs are case-insensitive; cloud-provider-azure writes the resource group in lower case.

export type AzureInstanceRef =
  | { kind: 'vm'; subscriptionId: string; resourceGroup: string; name: string }
  | { kind: 'vmss'; subscriptionId: string; resourceGroup: string; scaleSet: string; instanceId: string };

const PREFIX = 'azure://';
const SEGMENT = /^[^/\s]+$/;

/** Parses an ARM resource ID of a VM or a scale-set instance (`/subscriptions/…`). */
export function parseAzureVMResourceID(id: string, what = 'resource ID'): AzureInstanceRef {
  const parts = id.split('/');
  // ['', 'subscriptions', sub, 'resourceGroups', rg, 'providers', 'Microsoft.Compute', type, name, ...]
  const ok = parts[0] === '' && parts.slice(1).every((p) => SEGMENT.test(p))
    && parts[1]?.toLowerCase() === 'subscriptions' && parts[3]?.toLowerCase() === 'resourcegroups'
    && parts[5]?.toLowerCase() === 'providers' && parts[6]?.toLowerCase() === 'microsoft.compute';
  const type = parts[7]?.toLowerCase();
  if (ok && type === 'virtualmachines' && parts.length === 9) {
    return { kind: 'vm', subscriptionId: parts[2]!, resourceGroup: parts[4]!, name: parts[8]! };
  }
  if (ok && type === 'virtualmachinescalesets' && parts.length === 11 && parts[9]?.toLowerCase() === 'virtualmachines' && /^\d+$/.test(parts[10]!)) {
    return { kind: 'vmss', subscriptionId: parts[2]!, resourceGroup: parts[4]!, scaleSet: parts[8]!, instanceId: parts[10]! };
  }
  throw new Error(`${what}: "${id}" is neither …/providers/Microsoft.Compute/virtualMachines/<name> nor …/virtualMachineScaleSets/<set>/virtualMachines/<instance-id>`);
}

export function parseAzureProviderID(providerID: string): AzureInstanceRef {
  if (typeof providerID !== 'string' || !providerID.startsWith(PREFIX)) {
    throw new Error(`providerID: "${String(providerID)}" does not start with ${PREFIX}`);
  }
  return parseAzureVMResourceID(providerID.slice(PREFIX.length), 'providerID');
}

/** The providerID of an instance from its resource ID, the resource group in lower case (as cloud-provider-azure writes it). */
export function formatAzureProviderID(resourceID: string): string {
  const ref = parseAzureVMResourceID(resourceID);
  return `${PREFIX}${resourceIDOf(ref)}`;
}

/** The canonical resource ID of an instance (resource group in lower case, the rest as given). */
export function resourceIDOf(ref: AzureInstanceRef): string {
  const base = `/subscriptions/${ref.subscriptionId}/resourceGroups/${ref.resourceGroup.toLowerCase()}/providers/Microsoft.Compute`;
  return ref.kind === 'vm' ? `${base}/virtualMachines/${ref.name}` : `${base}/virtualMachineScaleSets/${ref.scaleSet}/virtualMachines/${ref.instanceId}`;
}

/** A case-insensitive key for one instance, to match listings against providerIDs. */
export function instanceKey(ref: AzureInstanceRef): string {
  return resourceIDOf(ref).toLowerCase();
}

/** The resource group named in any ARM resource ID, or undefined. */
export function resourceGroupOf(id: string): string | undefined {
  const m = /^\/subscriptions\/[^/]+\/resourceGroups\/([^/]+)\//i.exec(id);
  return m?.[1];
}


/**
 * The instance a providerID names, for comparing two providerIDs: its ARM resource ID in lower
 * case. ARM resource IDs are case-insensitive, and ARM answers with a casing of its own (which is
 * why cloud-provider-azure lower-cases the resource group of the IDs it writes:
 * ConvertResourceGroupNameToLower, pkg/provider/azure_wrap.go), so
 * `…/resourceGroups/RG/…/virtualMachines/VM-1` and `…/resourcegroups/rg/…/virtualmachines/vm-1`
 * are one VM. Undefined for anything parseAzureProviderID refuses.
 */
export function azureInstanceKey(providerID: string): string | undefined {
  try {
    return instanceKey(parseAzureProviderID(providerID));
  } catch {
    return undefined;
  }
}
