#!/usr/bin/env bash
# End-to-end run of node-address-ccm on a kind cluster. Needs docker, kind, kubectl, node and npm.
#
#   deploy/kind/e2e.sh            create the cluster, run the suite, delete the cluster
#   KEEP_CLUSTER=1 deploy/kind/e2e.sh   keep the cluster (and the host provider log) afterwards
#   KIND_NODE_IMAGE=kindest/node:vX.Y.Z deploy/kind/e2e.sh   pick the Kubernetes version
#
# What it does (see deploy/kind/README.md for the why):
#  1. creates the dual-stack cluster from deploy/kind/cluster-dual.yaml;
#  2. gives each node its --node-ip case in the kubelet flags file, deletes the Node object and
#     restarts the kubelet so the node registers again, uninitialised, with that flag;
#  3. builds the image, loads it into the nodes, applies deploy/overlays/kind (node-ipam);
#  4. starts cloud-node with the kind provider on the host, as the node-address-ccm
#     ServiceAccount;
#  5. runs `npx vitest run test/e2e` against the cluster.
set -euo pipefail

CLUSTER="node-address-ccm"
CONTEXT="kind-${CLUSTER}"
IMAGE="node-address-ccm:e2e"
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PROVIDER_PID=""

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'e2e: %s\n' "$*" >&2; exit 1; }

# --- prerequisites --------------------------------------------------------------------------
missing=()
for tool in docker kind kubectl node npm curl; do
  command -v "${tool}" >/dev/null 2>&1 || missing+=("${tool}")
done
if ((${#missing[@]} > 0)); then
  # Builtins only here: this must work on a machine that lacks the tools.
  printf '%s\n' >&2 \
    "e2e: missing required tools: ${missing[*]}" \
    "This script needs:" \
    "  docker   a running Docker engine (kind nodes are containers; the image is built with it)" \
    "  kind     https://kind.sigs.k8s.io/ (creates the cluster)" \
    "  kubectl  1.31 or newer (applies the kind overlay with 'kubectl apply -k')" \
    "  node/npm Node.js 20.19+ (builds the project, runs the host provider and the e2e suite)" \
    "  curl     (waits for the host provider's /readyz)"
  exit 2
fi
docker info >/dev/null 2>&1 || die "docker is installed but the engine is not reachable (is the daemon running?)"

WORK_DIR="$(mktemp -d "${TMPDIR:-/tmp}/node-address-ccm-e2e.XXXXXX")"
ADMIN_KUBECONFIG="${WORK_DIR}/admin.kubeconfig"
SA_KUBECONFIG="${WORK_DIR}/sa.kubeconfig"
PROVIDER_LOG="${WORK_DIR}/kind-provider.log"

cleanup() {
  local rc=$?
  if [[ -n "${PROVIDER_PID}" ]] && kill -0 "${PROVIDER_PID}" 2>/dev/null; then
    kill "${PROVIDER_PID}" 2>/dev/null || true
    wait "${PROVIDER_PID}" 2>/dev/null || true
  fi
  if [[ "${KEEP_CLUSTER:-0}" == "1" ]]; then
    log "keeping cluster ${CLUSTER}; kubeconfig ${ADMIN_KUBECONFIG}, host provider log ${PROVIDER_LOG}"
  else
    kind delete cluster --name "${CLUSTER}" >/dev/null 2>&1 || true
    rm -rf "${WORK_DIR}"
  fi
  exit "${rc}"
}
trap cleanup EXIT

kc() { kubectl --kubeconfig "${ADMIN_KUBECONFIG}" --context "${CONTEXT}" "$@"; }

# --- 1. cluster -----------------------------------------------------------------------------
if kind get clusters 2>/dev/null | grep -qx "${CLUSTER}"; then
  die "a kind cluster named ${CLUSTER} already exists; delete it first (kind delete cluster --name ${CLUSTER})"
fi
log "creating kind cluster ${CLUSTER}"
create_args=(create cluster --name "${CLUSTER}" --config "${REPO_ROOT}/deploy/kind/cluster-dual.yaml" --kubeconfig "${ADMIN_KUBECONFIG}" --wait 0s)
if [[ -n "${KIND_NODE_IMAGE:-}" ]]; then
  create_args+=(--image "${KIND_NODE_IMAGE}")
fi
kind "${create_args[@]}"

# --- 2. --node-ip per node ------------------------------------------------------------------
# kind cannot fix a node container's IP in advance, so the cases are set now that the
# containers exist. Node order: control-plane, worker, worker2 ... worker5.
container_ipv4() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$1"; }
container_ipv6() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.GlobalIPv6Address}}{{end}}' "$1"; }

# set_node_ip NODE VALUE: VALUE empty removes --node-ip (the kubelet then reports no
# provided-node-ip annotation and the provider's addresses are used as they are).
set_node_ip() {
  local node="$1" value="$2" flags=/var/lib/kubelet/kubeadm-flags.env
  docker exec "${node}" sed -i -E 's/ ?--node-ip=[^ "]*//' "${flags}"
  if [[ -n "${value}" ]]; then
    docker exec "${node}" sed -i -E "s|^KUBELET_KUBEADM_ARGS=\"|KUBELET_KUBEADM_ARGS=\"--node-ip=${value} |" "${flags}"
  fi
  docker exec "${node}" grep -q -- '--cloud-provider=external' "${flags}" \
    || die "${node}: kubelet is not running with --cloud-provider=external (kubeadm patch not applied?)"
}

mapfile -t NODES < <(kind get nodes --name "${CLUSTER}" | sort)
((${#NODES[@]} == 6)) || die "expected 6 nodes, found ${#NODES[@]}: ${NODES[*]}"
declare -A NODE_CASE
NODE_CASE["${CLUSTER}-control-plane"]="unset"
NODE_CASE["${CLUSTER}-worker"]="ipv4"
NODE_CASE["${CLUSTER}-worker2"]="ipv6"
NODE_CASE["${CLUSTER}-worker3"]="dual-ipv4-primary"
NODE_CASE["${CLUSTER}-worker4"]="dual-ipv6-primary"
NODE_CASE["${CLUSTER}-worker5"]="ip-the-node-lacks"

LACKING_NODE=""
for node in "${NODES[@]}"; do
  v4="$(container_ipv4 "${node}")"
  v6="$(container_ipv6 "${node}")"
  [[ -n "${v4}" && -n "${v6}" ]] || die "${node}: expected an IPv4 and an IPv6 address, got '${v4}' '${v6}'"
  case "${NODE_CASE[${node}]:-}" in
    unset) set_node_ip "${node}" "" ;;
    ipv4) set_node_ip "${node}" "${v4}" ;;
    ipv6) set_node_ip "${node}" "${v6}" ;;
    dual-ipv4-primary) set_node_ip "${node}" "${v4},${v6}" ;;
    dual-ipv6-primary) set_node_ip "${node}" "${v6},${v4}" ;;
    ip-the-node-lacks)
      # The kubelet asks for its real IPv4, but the provider (through the override) says the
      # instance only has 192.0.2.10 and 2001:db8::10: the provided IP is not among the node's
      # addresses, so the node must stay uninitialised with a warning event.
      set_node_ip "${node}" "${v4}"
      LACKING_NODE="${node}"
      ;;
    *) die "no --node-ip case for node ${node}" ;;
  esac
  log "${node}: ${NODE_CASE[${node}]} (container ${v4} ${v6})"
done

# Re-register every node with its final flags: it comes back with the uninitialized taint and
# no addresses, exactly like a new node.
for node in "${NODES[@]}"; do
  docker exec "${node}" systemctl stop kubelet
done
kc delete nodes --all --wait=true
for node in "${NODES[@]}"; do
  docker exec "${node}" systemctl start kubelet
done
log "waiting for ${#NODES[@]} nodes to register again"
for _ in $(seq 1 90); do
  count="$(kc get nodes --no-headers 2>/dev/null | wc -l | tr -d ' ')"
  [[ "${count}" == "${#NODES[@]}" ]] && break
  sleep 2
done
[[ "${count}" == "${#NODES[@]}" ]] || die "only ${count} of ${#NODES[@]} nodes registered"
# Each kubelet registers with the --provider-id kind gave it (kind://<node provider>/<cluster>/<node>,
# since kind v0.9.0), and the kind provider finds each node's container by it: the suite runs
# against the providerIDs real kind nodes carry, or not at all.
for node in "${NODES[@]}"; do
  provider_id="$(kc get node "${node}" -o jsonpath='{.spec.providerID}')"
  [[ "${provider_id}" == "kind://docker/${CLUSTER}/${node}" ]] \
    || die "${node}: spec.providerID is '${provider_id}', expected kind's kind://docker/${CLUSTER}/${node}"
done
# kubeadm set the control-plane label and taint through the API at init; put them back.
kc label node "${CLUSTER}-control-plane" node-role.kubernetes.io/control-plane= \
  node.kubernetes.io/exclude-from-external-load-balancers= --overwrite
kc taint node "${CLUSTER}-control-plane" node-role.kubernetes.io/control-plane:NoSchedule --overwrite

# --- 3. image and in-cluster part -----------------------------------------------------------
log "building ${IMAGE}"
docker build -f "${REPO_ROOT}/deploy/Dockerfile" -t "${IMAGE}" "${REPO_ROOT}"
kind load docker-image "${IMAGE}" --name "${CLUSTER}"
log "applying deploy/overlays/kind"
kc apply -k "${REPO_ROOT}/deploy/overlays/kind"
kc wait --for=condition=Established --timeout=60s crd/clustercidrs.networking.x-k8s.io
# Address overrides for the kind provider (format: providers/kind/overrides.ts).
overrides_yaml="nodes: {}"
if [[ -n "${LACKING_NODE}" ]]; then
  overrides_yaml="nodes:
  ${LACKING_NODE}:
    mode: replace
    addresses:
      - { type: InternalIP, address: '192.0.2.10' }
      - { type: InternalIP, address: '2001:db8::10' }
      - { type: Hostname, address: '${LACKING_NODE}' }"
fi
kc -n kube-system create configmap node-address-ccm-kind-overrides \
  --from-literal=overrides.yaml="${overrides_yaml}" --dry-run=client -o yaml | kc apply -f -

# --- 4. cloud-node with the kind provider, on the host, as the ServiceAccount ----------------
log "building the project for the host provider"
(cd "${REPO_ROOT}" && npm ci --no-audit --no-fund && npm run build)
server="$(kc config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')"
ca="$(kc config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')"
token="$(kc -n kube-system create token node-address-ccm --duration=2h)"
umask 077
cat >"${SA_KUBECONFIG}" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: ${CLUSTER}
    cluster:
      server: ${server}
      certificate-authority-data: ${ca}
users:
  - name: node-address-ccm
    user:
      token: ${token}
contexts:
  - name: ${CONTEXT}
    context:
      cluster: ${CLUSTER}
      user: node-address-ccm
current-context: ${CONTEXT}
KUBECONFIG
log "starting the kind provider on the host (log: ${PROVIDER_LOG})"
# --kubeconfig is the controllers' client; KUBECONFIG is the kind provider's (override ConfigMap).
(cd "${REPO_ROOT}" && KUBECONFIG="${SA_KUBECONFIG}" exec node dist/src/cli/main.js run \
  --controllers=cloud-node,cloud-node-lifecycle \
  --cloud-provider=kind \
  --cloud-config "${REPO_ROOT}/deploy/kind/kind-provider.conf" \
  --kubeconfig "${SA_KUBECONFIG}" \
  --leader-elect=false \
  --bind-address=127.0.0.1 \
  --secure-port=10268) >"${PROVIDER_LOG}" 2>&1 &
PROVIDER_PID=$!
for _ in $(seq 1 30); do
  curl -fsSk https://127.0.0.1:10268/readyz >/dev/null 2>&1 && break
  kill -0 "${PROVIDER_PID}" 2>/dev/null || { cat "${PROVIDER_LOG}" >&2; die "the host provider exited"; }
  sleep 1
done
curl -fsSk https://127.0.0.1:10268/readyz >/dev/null 2>&1 \
  || { cat "${PROVIDER_LOG}" >&2; die "the host provider did not become ready on 127.0.0.1:10268"; }

log "waiting for the in-cluster Deployment"
kc -n kube-system rollout status deployment/node-address-ccm --timeout=180s

# --- 5. the e2e suite -----------------------------------------------------------------------
log "running test/e2e"
(cd "${REPO_ROOT}" && KUBECONFIG="${ADMIN_KUBECONFIG}" E2E_REAL_CLUSTER=1 E2E_ALLOWED_CONTEXTS="${CONTEXT}" \
  E2E_KIND_CLUSTER="${CLUSTER}" npx vitest run test/e2e)
log "e2e passed"
