// Azure Stack Hub serves older ARM API versions than the SDK clients ask for. cloud-provider-azure
// sends, when `cloud` is AzureStackCloud (and disableAzureStackCloud is not set), each client's
// AzureStackCloudAPIVersion (pkg/azclient/*/zz_generated_client.go): virtual machines 2017-12-01,
// scale sets and their instances 2019-07-01, network interfaces and public IPs 2018-11-01. This
// picks the same version for each request the adapter makes, by its path; the policy rewrites the
// `api-version` of every request, next-page links included.

export const AZURE_STACK_API_VERSIONS = {
  virtualMachines: '2017-12-01',
  virtualMachineScaleSets: '2019-07-01',
  network: '2018-11-01',
} as const;

/** The Azure Stack Hub API version of an ARM request path, or undefined for a path the adapter does not call. */
export function azureStackApiVersion(pathname: string): string | undefined {
  const p = pathname.toLowerCase();
  // Scale-set NICs and public IPs are the network resource provider's, under the compute path.
  if (p.includes('/providers/microsoft.network/') || /\/virtualmachinescalesets\/[^/]+\/(virtualmachines\/[^/]+\/)?(networkinterfaces|publicipaddresses)(\/|$)/.test(p)) {
    return AZURE_STACK_API_VERSIONS.network;
  }
  if (p.includes('/providers/microsoft.compute/virtualmachinescalesets')) return AZURE_STACK_API_VERSIONS.virtualMachineScaleSets;
  if (p.includes('/providers/microsoft.compute/virtualmachines')) return AZURE_STACK_API_VERSIONS.virtualMachines;
  return undefined;
}

/** A core-rest-pipeline policy (structural, so no SDK type is imported) that sends Azure Stack Hub's API version for each request. */
export function azureStackApiVersionPolicy() {
  return {
    name: 'nodeAddressCcmAzureStackApiVersion',
    sendRequest<Req extends { url: string }, Res>(request: Req, next: (r: Req) => Promise<Res>): Promise<Res> {
      const version = azureStackApiVersion(new URL(request.url).pathname);
      // Only the api-version parameter changes; the rest of the URL (a next-page link's token) stays byte for byte.
      if (version) {
        request.url = /[?&]api-version=[^&#]*/.test(request.url)
          ? request.url.replace(/([?&])api-version=[^&#]*/, `$1api-version=${version}`)
          : `${request.url}${request.url.includes('?') ? '&' : '?'}api-version=${version}`;
      }
      return next(request);
    },
  };
}
