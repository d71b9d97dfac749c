// A Docker Engine API emulator on a unix socket in a temp dir: GET /containers/json (with the
// `all` flag and label filters) and GET /containers/{id|name}/json, optionally under a /vX.Y
// prefix, with Docker's error bodies, request counting and fault injection.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface EmulatedNetwork {
  IPAddress?: string;
  IPPrefixLen?: number;
  GlobalIPv6Address?: string;
  GlobalIPv6PrefixLen?: number;
}

export interface EmulatedContainerInput {
  name: string;
  labels?: Record<string, string>;
  networks?: Record<string, EmulatedNetwork>;
  /** Docker state: running (default), exited, created, paused, restarting, dead. */
  state?: string;
  /**
   * HostConfig.NetworkMode: the network `docker run --net` named (kind: `kind`, or
   * KIND_EXPERIMENTAL_DOCKER_NETWORK's). Default: `kind` when the container is on it, else `bridge`.
   */
  networkMode?: string;
}

interface Stored {
  id: string;
  input: EmulatedContainerInput;
}

export interface DockerRequest {
  method: string;
  path: string;
  query: Record<string, string>;
}

export class DockerEmulator {
  readonly requests: DockerRequest[] = [];
  private readonly containers: Stored[] = [];
  private faults: { status: number; message: string }[] = [];
  private afterList: (() => void)[] = [];
  private server?: Server;
  private dir?: string;
  socketPath = '';

  /** Adds a container; returns its 64-hex id. */
  addContainer(input: EmulatedContainerInput): string {
    const id = randomBytes(32).toString('hex');
    this.containers.push({ id, input });
    return id;
  }

  removeContainer(name: string): void {
    const i = this.containers.findIndex((c) => c.input.name === name);
    if (i >= 0) this.containers.splice(i, 1);
  }

  setState(name: string, state: string): void {
    const c = this.containers.find((x) => x.input.name === name);
    if (!c) throw new Error(`DockerEmulator: no container ${name}`);
    c.input.state = state;
  }

  setNetworks(name: string, networks: Record<string, EmulatedNetwork>): void {
    const c = this.containers.find((x) => x.input.name === name);
    if (!c) throw new Error(`DockerEmulator: no container ${name}`);
    c.input.networks = networks;
  }

  /** Runs once right after the next listing is answered, e.g. to remove a container mid-round. */
  afterNextList(fn: () => void): void {
    this.afterList.push(fn);
  }

  /** The next requests fail with these statuses, one per request. */
  failNext(...faults: { status: number; message?: string }[]): void {
    this.faults.push(...faults.map((f) => ({ status: f.status, message: f.message ?? 'injected failure' })));
  }

  count(prefix: 'list' | 'inspect'): number {
    return this.requests.filter((r) => (prefix === 'list' ? /\/containers\/json$/.test(r.path) : /\/containers\/[^/]+\/json$/.test(r.path) && !r.path.endsWith('/containers/json'))).length;
  }

  async start(): Promise<string> {
    this.dir = await mkdtemp(path.join(tmpdir(), 'docker-emu-'));
    this.socketPath = path.join(this.dir, 'docker.sock');
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.socketPath, resolve);
    });
    return this.socketPath;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    this.server = undefined;
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }

  private inspect(c: Stored): Record<string, unknown> {
    const state = c.input.state ?? 'running';
    // Docker gives a container its IPs while it runs (paused included) and clears them, and the
    // endpoint, when it stops; the attachments themselves stay.
    const up = state === 'running' || state === 'paused';
    const networks: Record<string, unknown> = {};
    for (const [name, n] of Object.entries(c.input.networks ?? {})) {
      networks[name] = {
        IPAMConfig: null,
        Links: null,
        Aliases: name === 'bridge' ? null : [c.input.name],
        MacAddress: up ? '02:42:ac:12:00:02' : '',
        DriverOpts: null,
        GwPriority: 0,
        NetworkID: randomBytes(32).toString('hex'),
        EndpointID: up ? randomBytes(32).toString('hex') : '',
        Gateway: up && n.IPAddress ? n.IPAddress.replace(/\.\d+$/, '.1') : '',
        IPAddress: up ? (n.IPAddress ?? '') : '',
        IPPrefixLen: up ? (n.IPPrefixLen ?? (n.IPAddress ? 16 : 0)) : 0,
        IPv6Gateway: '',
        GlobalIPv6Address: up ? (n.GlobalIPv6Address ?? '') : '',
        GlobalIPv6PrefixLen: up ? (n.GlobalIPv6PrefixLen ?? (n.GlobalIPv6Address ? 64 : 0)) : 0,
        DNSNames: name === 'bridge' ? null : [c.input.name, c.id.slice(0, 12)],
      };
    }
    const networkMode = c.input.networkMode ?? (c.input.networks && 'kind' in c.input.networks ? 'kind' : 'bridge');
    return {
      Id: c.id,
      Created: '2026-01-01T00:00:00.000000000Z',
      Path: '/usr/local/bin/entrypoint',
      Args: ['/sbin/init'],
      Name: `/${c.input.name}`,
      State: {
        Status: state,
        Running: up || state === 'restarting',
        Paused: state === 'paused',
        Restarting: state === 'restarting',
        OOMKilled: false,
        Dead: state === 'dead',
        Pid: up ? 4242 : 0,
        ExitCode: state === 'exited' ? 130 : 0,
        Error: '',
      },
      Image: 'sha256:' + '0'.repeat(64),
      RestartCount: 0,
      Driver: 'overlay2',
      Platform: 'linux',
      HostConfig: { NetworkMode: networkMode, RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 1 }, Privileged: true },
      Config: { Hostname: c.input.name, Image: 'kindest/node:v1.33.1', Labels: c.input.labels ?? {}, StopSignal: 'SIGRTMIN+3' },
      NetworkSettings: { Bridge: '', SandboxID: up ? randomBytes(32).toString('hex') : '', SandboxKey: up ? `/var/run/docker/netns/${c.id.slice(0, 12)}` : '', Ports: {}, Networks: networks },
    };
  }

  private summary(c: Stored): Record<string, unknown> {
    const full = this.inspect(c);
    const state = c.input.state ?? 'running';
    return {
      Id: c.id,
      Names: [`/${c.input.name}`],
      Image: 'kindest/node:v1.33.1',
      Labels: c.input.labels ?? {},
      State: state,
      Status: state === 'running' ? 'Up 5 minutes' : state === 'paused' ? 'Up 5 minutes (Paused)' : 'Exited (130) 1 minute ago',
      HostConfig: { NetworkMode: (full.HostConfig as { NetworkMode: string }).NetworkMode },
      NetworkSettings: { Networks: (full.NetworkSettings as { Networks: unknown }).Networks },
    };
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://docker');
    const p = url.pathname.replace(/^\/v1\.\d+(?=\/)/, '');
    const query = Object.fromEntries(url.searchParams.entries());
    this.requests.push({ method: req.method ?? '', path: p, query });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'api-version': '1.47' });
      res.end(JSON.stringify(body));
    };
    const fault = this.faults.shift();
    if (fault) return send(fault.status, { message: fault.message });
    if (req.method !== 'GET') return send(404, { message: 'page not found' });

    if (p === '/containers/json') {
      let labels: string[] = [];
      if (query.filters) {
        let filters: Record<string, unknown>;
        try {
          filters = JSON.parse(query.filters) as Record<string, unknown>;
        } catch {
          return send(400, { message: `invalid filter '${query.filters}'` });
        }
        for (const key of Object.keys(filters)) {
          if (key !== 'label') return send(400, { message: `invalid filter '${key}'` });
        }
        const raw = filters.label;
        // Docker accepts both the list form and the older {"k=v": true} map form.
        labels = Array.isArray(raw) ? raw.map(String) : raw && typeof raw === 'object' ? Object.keys(raw) : [];
      }
      const all = query.all === '1' || query.all === 'true';
      const matches = this.containers.filter((c) => {
        if (!all && (c.input.state ?? 'running') !== 'running') return false;
        return labels.every((l) => {
          const eq = l.indexOf('=');
          const key = eq < 0 ? l : l.slice(0, eq);
          const value = eq < 0 ? undefined : l.slice(eq + 1);
          const have = c.input.labels?.[key];
          return have !== undefined && (value === undefined || have === value);
        });
      });
      send(200, matches.map((c) => this.summary(c)));
      for (const fn of this.afterList.splice(0)) fn();
      return;
    }
    const m = /^\/containers\/([^/]+)\/json$/.exec(p);
    if (m) {
      const ref = decodeURIComponent(m[1]);
      const c = this.containers.find((x) => x.id === ref || x.input.name === ref || (ref.length >= 12 && x.id.startsWith(ref)));
      if (!c) return send(404, { message: `No such container: ${ref}` });
      return send(200, this.inspect(c));
    }
    return send(404, { message: 'page not found' });
  }
}
