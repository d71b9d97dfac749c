// GET /containers/{id}/json bodies in the Docker Engine API's own shape (API 1.47/1.48: the
// endpoint fields of moby's api/types/network.EndpointSettings, HostConfig.NetworkMode, State),
// for kind node containers as kind creates them (pkg/cluster/internal/providers/docker/provision.go:
// `--net <network>`, the io.x-k8s.kind.* labels, hostname = container name).

type Json = Record<string, unknown>;

const ID = '3f0c2c7e1b6a4d0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f';

function endpoint(networkID: string, ip: string, prefix: number, gateway: string, v6 = '', v6Prefix = 0, v6Gateway = '', aliases: string[] | null = null): Json {
  return {
    IPAMConfig: null,
    Links: null,
    Aliases: aliases,
    MacAddress: '02:42:ac:14:00:03',
    DriverOpts: null,
    GwPriority: 0,
    NetworkID: networkID,
    EndpointID: 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90',
    Gateway: gateway,
    IPAddress: ip,
    IPPrefixLen: prefix,
    IPv6Gateway: v6Gateway,
    GlobalIPv6Address: v6,
    GlobalIPv6PrefixLen: v6Prefix,
    DNSNames: aliases === null ? null : [...aliases, ID.slice(0, 12)],
  };
}

/**
 * `kind create cluster --name ccm-custom` with KIND_EXPERIMENTAL_DOCKER_NETWORK=ccm-net (a
 * dual-stack user network), then `docker network connect bridge ccm-custom-worker`: the worker is
 * on its primary network and on Docker's default bridge, whose name sorts first.
 */
export function kindWorkerOnCustomNetworkAndBridge(): Json {
  return {
    Id: ID,
    Created: '2026-03-02T09:14:07.512334871Z',
    Path: '/usr/local/bin/entrypoint',
    Args: ['/sbin/init'],
    State: {
      Status: 'running',
      Running: true,
      Paused: false,
      Restarting: false,
      OOMKilled: false,
      Dead: false,
      Pid: 48211,
      ExitCode: 0,
      Error: '',
      StartedAt: '2026-03-02T09:14:08.100441312Z',
      FinishedAt: '0001-01-01T00:00:00Z',
    },
    Image: 'sha256:9c1e0a1fd1e1d3b4f6a48b5e0e4a52e1f0e39bc5a1b8f6c2d4e7a9b0c1d2e3f4',
    ResolvConfPath: `/var/lib/docker/containers/${ID}/resolv.conf`,
    HostnamePath: `/var/lib/docker/containers/${ID}/hostname`,
    HostsPath: `/var/lib/docker/containers/${ID}/hosts`,
    LogPath: `/var/lib/docker/containers/${ID}/${ID}-json.log`,
    Name: '/ccm-custom-worker',
    RestartCount: 0,
    Driver: 'overlay2',
    Platform: 'linux',
    MountLabel: '',
    ProcessLabel: '',
    AppArmorProfile: 'unconfined',
    ExecIDs: null,
    HostConfig: {
      Binds: ['/lib/modules:/lib/modules:ro'],
      ContainerIDFile: '',
      LogConfig: { Type: 'json-file', Config: {} },
      NetworkMode: 'ccm-net',
      PortBindings: {},
      RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 1 },
      AutoRemove: false,
      Privileged: true,
      SecurityOpt: ['seccomp=unconfined', 'apparmor=unconfined', 'label=disable'],
      Tmpfs: { '/run': '', '/tmp': '' },
      CgroupnsMode: 'private',
      Init: false,
    },
    Mounts: [
      { Type: 'volume', Name: 'b6b0f5d2c7a1', Source: '/var/lib/docker/volumes/b6b0f5d2c7a1/_data', Destination: '/var', Driver: 'local', Mode: '', RW: true, Propagation: '' },
      { Type: 'bind', Source: '/lib/modules', Destination: '/lib/modules', Mode: 'ro', RW: false, Propagation: 'rprivate' },
    ],
    Config: {
      Hostname: 'ccm-custom-worker',
      Domainname: '',
      User: '',
      AttachStdin: false,
      AttachStdout: false,
      AttachStderr: false,
      Tty: true,
      OpenStdin: false,
      StdinOnce: false,
      Env: ['KIND_EXPERIMENTAL_CONTAINERD_SNAPSHOTTER', 'container=docker', 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
      Cmd: null,
      Image: 'kindest/node:v1.33.1',
      Volumes: { '/var': {} },
      WorkingDir: '/',
      Entrypoint: ['/usr/local/bin/entrypoint', '/sbin/init'],
      OnBuild: null,
      Labels: { 'io.x-k8s.kind.cluster': 'ccm-custom', 'io.x-k8s.kind.role': 'worker' },
      StopSignal: 'SIGRTMIN+3',
    },
    NetworkSettings: {
      Bridge: '',
      SandboxID: 'e7d6c5b4a3928170f6e5d4c3b2a19080f7e6d5c4b3a29180f7e6d5c4b3a29180',
      SandboxKey: '/var/run/docker/netns/e7d6c5b4a392',
      Ports: {},
      HairpinMode: false,
      LinkLocalIPv6Address: '',
      LinkLocalIPv6PrefixLen: 0,
      SecondaryIPAddresses: null,
      SecondaryIPv6Addresses: null,
      EndpointID: '',
      Gateway: '',
      GlobalIPv6Address: '',
      GlobalIPv6PrefixLen: 0,
      IPAddress: '',
      IPPrefixLen: 0,
      IPv6Gateway: '',
      MacAddress: '',
      Networks: {
        // Docker lists a container's networks by name; "bridge" sorts before "ccm-net".
        bridge: endpoint('5c7e2f1d0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d', '172.17.0.2', 16, '172.17.0.1'),
        'ccm-net': endpoint(
          'd41e6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091',
          '172.20.0.3', 16, '172.20.0.1', 'fd00:c0de:ccc::3', 64, 'fd00:c0de:ccc::1',
          ['ccm-custom-worker'],
        ),
      },
    },
  };
}

/** The same container after `docker stop ccm-custom-worker`: attached still, every IP cleared. */
export function stopped(inspect: Json): Json {
  const copy = structuredClone(inspect) as Json & { State: Json; NetworkSettings: Json & { Networks: Record<string, Json> } };
  copy.State = { ...copy.State, Status: 'exited', Running: false, Pid: 0, ExitCode: 130, FinishedAt: '2026-03-02T10:02:51.774212909Z' };
  copy.NetworkSettings.SandboxID = '';
  copy.NetworkSettings.SandboxKey = '';
  for (const ep of Object.values(copy.NetworkSettings.Networks)) {
    Object.assign(ep, { MacAddress: '', EndpointID: '', Gateway: '', IPAddress: '', IPPrefixLen: 0, IPv6Gateway: '', GlobalIPv6Address: '', GlobalIPv6PrefixLen: 0, DNSNames: null });
  }
  return copy;
}
