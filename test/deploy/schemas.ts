// Validation of any rendered object against its schema, found by apiVersion and kind: a CRD in
// the same rendering (or deploy/base) for custom kinds, through openapi.ts (structure and CEL);
// the kubernetes-models packages (built-in kinds, and the vendor model packages installed, e.g.
// prometheus-operator's) otherwise. A kind with no schema anywhere is an error, never a pass.
import { isObject, type JsonObject, type K8sObject } from './kustomize.js';
import { validate } from './openapi.js';

/** Packages whose subpath `<pkg>/<group>/<version>` exports one model class per kind. */
const MODEL_PACKAGES = ['kubernetes-models', '@kubernetes-models/prometheus-operator'];

type ModelClass = new (o: unknown) => { validate(): void };

async function modelClass(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  for (const pkg of MODEL_PACKAGES) {
    let mod: Record<string, unknown>;
    try {
      mod = (await import(`${pkg}/${apiVersion}`)) as Record<string, unknown>;
    } catch (err) {
      // This package does not serve that group/version (or is not installed): try the next.
      const e = err as NodeJS.ErrnoException;
      if (['ERR_MODULE_NOT_FOUND', 'ERR_PACKAGE_PATH_NOT_EXPORTED', 'MODULE_NOT_FOUND'].includes(e.code ?? '') || /is not exported|Cannot find (module|package)|Failed to (load|resolve)/.test(e.message)) continue;
      throw err;
    }
    const cls = mod[kind];
    if (typeof cls === 'function') return cls as ModelClass;
  }
  return undefined;
}

/** The openAPIV3Schema a CRD among `crds` declares for apiVersion/kind (served versions only). */
export function crdSchemaFor(crds: readonly K8sObject[], apiVersion: string, kind: string): JsonObject | undefined {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  for (const crd of crds) {
    if (crd.kind !== 'CustomResourceDefinition' || !isObject(crd.spec)) continue;
    const spec = crd.spec;
    if (spec.group !== group || !isObject(spec.names) || spec.names.kind !== kind || !Array.isArray(spec.versions)) continue;
    const v = spec.versions.find((x) => isObject(x) && x.name === version && x.served === true);
    if (isObject(v) && isObject(v.schema) && isObject(v.schema.openAPIV3Schema)) return v.schema.openAPIV3Schema;
  }
  return undefined;
}

/** Problems of `o` against its schema; `crds` are the CRDs that may define it. */
export async function validateAgainstSchemas(o: K8sObject, crds: readonly K8sObject[]): Promise<string[]> {
  const crdSchema = crdSchemaFor(crds, o.apiVersion, o.kind);
  if (crdSchema) return validate(crdSchema, o);
  const cls = await modelClass(o.apiVersion, o.kind);
  if (!cls) return [`no schema for ${o.apiVersion} ${o.kind}: no CRD defines it and no model package (${MODEL_PACKAGES.join(', ')}) has it`];
  try {
    new cls(o).validate();
    return [];
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  }
}
