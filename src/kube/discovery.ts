// Which version of a resource the API server serves, read from discovery once at start: the
// ServiceCIDR API went GA in 1.33, and clusters before it serve v1beta1 or nothing.
import type { KubeClient } from './client.js';
import { isNotFound } from './errors.js';
import { SERVICECIDRS, SERVICECIDRS_V1BETA1, type ResourceType } from './types.js';

/** The ServiceCIDR version the API server serves: v1, else v1beta1, else undefined. */
export async function servedServiceCIDRResource(client: KubeClient): Promise<ResourceType | undefined> {
  let group: { versions?: { version?: string }[] };
  try {
    group = await client.request({ method: 'GET', path: `/apis/${SERVICECIDRS.group}` });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const versions = new Set((group.versions ?? []).map((v) => v.version));
  for (const res of [SERVICECIDRS, SERVICECIDRS_V1BETA1]) {
    if (!versions.has(res.version)) continue;
    // The group may be served without this resource (networking.k8s.io predates ServiceCIDR).
    const list = await client.request<{ resources?: { name?: string }[] }>({ method: 'GET', path: `/apis/${res.group}/${res.version}` });
    if ((list.resources ?? []).some((r) => r.name === res.plural)) return res;
  }
  return undefined;
}
