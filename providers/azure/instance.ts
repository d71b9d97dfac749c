// Pure facts about one instance from what ARM lists: its zone label and whether it is shut down,
// as cloud-provider-azure derives them.

/**
 * The zone label of an instance, as cloud-provider-azure's GetZoneByNodeName makes it:
 * `<location>-<zone>` for a zonal one, else the platform fault domain of its instance view (a
 * number as text); both lower case. Without either, a scale-set instance (uniform or flexible) is
 * an error ("failed to get zone info", azure_vmss.go and azure_vmssflex.go: the node is retried),
 * and a standalone VM is "0" (azure_standard.go: no fault domain reads as 0).
 */
export function azureZone(location: string, zones: readonly string[] | undefined, faultDomain: number | undefined, inScaleSet: boolean): string {
  const zone = zones?.[0];
  if (zone !== undefined && zone !== '') {
    if (!/^\d+$/.test(zone)) throw new Error(`zones: "${zone}" is not a zone number`);
    return `${location.toLowerCase()}-${Number(zone)}`;
  }
  if (faultDomain !== undefined) return String(faultDomain);
  if (inScaleSet) throw new Error('failed to get zone info: the scale-set instance has neither a zone nor a platform fault domain in its instance view');
  return '0';
}

export interface AzureInstanceStatus {
  code?: string;
}

/** The power state of an instance view (`PowerState/deallocated` → `deallocated`), lower case; undefined without one. */
export function azurePowerState(statuses: readonly AzureInstanceStatus[] | undefined): string | undefined {
  for (const s of statuses ?? []) {
    const code = s.code ?? '';
    if (code.toLowerCase().startsWith('powerstate/')) return code.slice('powerstate/'.length).toLowerCase();
  }
  return undefined;
}

/** Power states in which cloud-provider-azure reports an instance shut down. */
export const AZURE_SHUTDOWN_POWER_STATES: readonly string[] = ['stopped', 'deallocated', 'deallocating'];

/**
 * cloud-provider-azure's InstanceShutdownByProviderID: shut down when the provisioning state is
 * Succeeded and the power state is stopped, deallocated or deallocating. A VM still being created
 * or updated is not shut down, whatever its power state says.
 */
export function azureIsShutdown(powerState: string | undefined, provisioningState: string | undefined): boolean {
  return (provisioningState ?? '').toLowerCase() === 'succeeded' && AZURE_SHUTDOWN_POWER_STATES.includes((powerState ?? '').toLowerCase());
}

/** The provisioning state of an instance view (`ProvisioningState/succeeded` → `succeeded`); undefined without one. */
export function azureProvisioningState(statuses: readonly AzureInstanceStatus[] | undefined): string | undefined {
  for (const s of statuses ?? []) {
    const code = s.code ?? '';
    if (code.toLowerCase().startsWith('provisioningstate/')) return code.slice('provisioningstate/'.length).toLowerCase();
  }
  return undefined;
}
