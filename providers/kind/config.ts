// --cloud-config for kind (YAML):
//   cluster: kind                      # required: the kind cluster name
//   dockerSocket: /var/run/docker.sock # default
//   overridesFile: /etc/ccm/overrides.yaml
//   overridesConfigMap: { namespace: kube-system, name: node-address-overrides, key: overrides.yaml }
//   kubeconfig: ~/.kube/kind-config    # for the ConfigMap; default: in-cluster or $KUBECONFIG
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

export interface KindConfigMapRef {
  namespace: string;
  name: string;
  key: string;
}

export interface KindConfig {
  cluster: string;
  dockerSocket: string;
  overridesFile?: string;
  overridesConfigMap?: KindConfigMapRef;
  kubeconfig?: string;
}

export const DEFAULT_DOCKER_SOCKET = '/var/run/docker.sock';

const dnsLabel = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;

const schema = z.strictObject({
  cluster: z.string().regex(/^[a-z0-9](?:[-a-z0-9.]*[a-z0-9])?$/, 'must be a kind cluster name (lowercase letters, digits, "-", ".")'),
  dockerSocket: z.string().min(1).default(DEFAULT_DOCKER_SOCKET),
  overridesFile: z.string().min(1).optional(),
  overridesConfigMap: z
    .strictObject({
      namespace: z.string().regex(dnsLabel, 'must be a namespace name').default('kube-system'),
      name: z.string().min(1).max(253),
      key: z.string().min(1).default('overrides.yaml'),
    })
    .optional(),
  kubeconfig: z.string().min(1).optional(),
});

export function parseKindConfig(text: string, source = 'cloud-config'): KindConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new Error(`${source}: not valid YAML: ${(err as Error).message}`, { cause: err });
  }
  const result = schema.safeParse(doc ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new Error(`${source}: ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`);
  }
  const c = result.data;
  if (c.overridesFile && c.overridesConfigMap) {
    throw new Error(`${source}: overridesFile and overridesConfigMap are exclusive; give one`);
  }
  return c;
}
