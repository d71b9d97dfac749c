// --cloud-config for kind (YAML):
//   cluster: kind                      # required: the kind cluster name
//   dockerSocket: /var/run/docker.sock # default: $DOCKER_HOST when unix://, else this
//   overridesFile: /etc/ccm/overrides.yaml
//   overridesConfigMap: { namespace: kube-system, name: node-address-overrides, key: overrides.yaml }
//   kubeconfig: ~/.kube/kind-config    # for the ConfigMap; default: in-cluster or $KUBECONFIG
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { KIND_CLUSTER_NAME } from './provider-id.js';

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
  // kind's own rule (a trailing "-" included), starting with a letter or digit as every node
  // container name must: see provider-id.ts.
  cluster: z.string().regex(KIND_CLUSTER_NAME, 'must be a kind cluster name (lowercase letters, digits, "-" and ".", starting with a letter or digit)'),
  dockerSocket: z.string().min(1).optional(),
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

/**
 * The socket when the config names none: DOCKER_HOST like the docker CLI (rootless Docker and
 * Podman set it), else the standard path. A non-unix DOCKER_HOST cannot be used here.
 */
export function defaultDockerSocket(dockerHost: string | undefined): string {
  if (!dockerHost) return DEFAULT_DOCKER_SOCKET;
  if (dockerHost.startsWith('unix://') && dockerHost.length > 'unix://'.length) return dockerHost.slice('unix://'.length);
  throw new Error(`DOCKER_HOST: "${dockerHost}" is not a unix:// socket; set dockerSocket in the kind cloud-config`);
}

export function parseKindConfig(text: string, source = 'cloud-config', env: Record<string, string | undefined> = process.env): KindConfig {
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
  return { ...c, dockerSocket: c.dockerSocket ?? defaultDockerSocket(env.DOCKER_HOST) };
}
