// A small Compute Engine v1 REST emulator for the instances read API: get, list and
// aggregatedList with maxResults/pageToken paging, error bodies in the API's shape, a bearer
// token check, per-request counting and fault injection. Loopback only.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type EmulatedInstance = Record<string, unknown> & { name: string };

export interface RecordedRequest {
  method: string;
  kind: 'get' | 'list' | 'aggregatedList' | 'other';
  path: string;
  query: Record<string, string>;
  /** Instances returned by this request. */
  returned: number;
}

export interface GceEmulatorOptions {
  /** Token the client must present as "Authorization: Bearer <token>". */
  token?: string;
}

const MAX_RESULTS = 500;

export class GceEmulator {
  readonly requests: RecordedRequest[] = [];
  private readonly zones = new Map<string, Map<string, EmulatedInstance[]>>(); // project → zone → instances
  private readonly unreachable = new Set<string>(); // "project/zone"
  private faults: { status: number; message: string }[] = [];
  private outage?: number;
  private server?: Server;
  private readonly token: string;

  constructor(options: GceEmulatorOptions = {}) {
    this.token = options.token ?? 'emulator-token';
  }

  get url(): string {
    const addr = this.server?.address() as AddressInfo | null;
    if (!addr) throw new Error('GceEmulator: not started');
    return `http://127.0.0.1:${addr.port}`;
  }

  /** Adds (or replaces) an instance; zone, selfLink and id are filled like the API does. */
  addInstance(project: string, zone: string, instance: EmulatedInstance): void {
    const byZone = this.zones.get(project) ?? new Map<string, EmulatedInstance[]>();
    this.zones.set(project, byZone);
    const list = (byZone.get(zone) ?? []).filter((i) => i.name !== instance.name);
    const base = `https://www.googleapis.com/compute/v1/projects/${project}/zones/${zone}`;
    list.push({
      kind: 'compute#instance',
      id: String(1_000_000 + list.length),
      status: 'RUNNING',
      ...instance,
      zone: base,
      selfLink: `${base}/instances/${instance.name}`,
    });
    // The API returns instances of a zone ordered by name.
    list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    byZone.set(zone, list);
  }

  removeInstance(project: string, zone: string, name: string): void {
    const list = this.zones.get(project)?.get(zone);
    if (list) this.zones.get(project)!.set(zone, list.filter((i) => i.name !== name));
  }

  /** Marks a zone unreachable: aggregatedList reports it with an UNREACHABLE warning, list fails. */
  setUnreachable(project: string, zone: string, unreachable = true): void {
    if (unreachable) this.unreachable.add(`${project}/${zone}`);
    else this.unreachable.delete(`${project}/${zone}`);
  }

  /** The next requests fail with these statuses, one per request. */
  failNext(...faults: { status: number; message?: string }[]): void {
    this.faults.push(...faults.map((f) => ({ status: f.status, message: f.message ?? 'injected failure' })));
  }

  /** Every request fails with this status until cleared with undefined. */
  setOutage(status: number | undefined): void {
    this.outage = status;
  }

  count(kind: RecordedRequest['kind']): number {
    return this.requests.filter((r) => r.kind === kind).length;
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    this.server = undefined;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const query = Object.fromEntries(url.searchParams.entries());
    const record: RecordedRequest = { method: req.method ?? '', kind: 'other', path: url.pathname, query, returned: 0 };
    this.requests.push(record);
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
      res.end(JSON.stringify(body));
    };
    const error = (status: number, reason: string, message: string) =>
      send(status, { error: { code: status, message, errors: [{ domain: 'global', reason, message }] } });

    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return error(401, 'required', 'Request is missing required authentication credential.');
    }
    const parts = url.pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
    // compute/v1/projects/{p}/zones/{z}/instances[/{name}] | compute/v1/projects/{p}/aggregated/instances
    if (parts[0] !== 'compute' || parts[1] !== 'v1' || parts[2] !== 'projects' || req.method !== 'GET') {
      return error(404, 'notFound', `No such method: ${req.method} ${url.pathname}`);
    }
    const project = parts[3];
    if (parts[4] === 'zones' && parts[6] === 'instances' && parts.length === 8) record.kind = 'get';
    else if (parts[4] === 'zones' && parts[6] === 'instances' && parts.length === 7) record.kind = 'list';
    else if (parts[4] === 'aggregated' && parts[5] === 'instances' && parts.length === 6) record.kind = 'aggregatedList';
    else return error(404, 'notFound', `No such method: GET ${url.pathname}`);

    const fault = this.outage ? { status: this.outage, message: 'service outage' } : this.faults.shift();
    if (fault) return error(fault.status, fault.status === 429 ? 'rateLimitExceeded' : 'backendError', fault.message);

    const maxResults = query.maxResults === undefined ? MAX_RESULTS : Number(query.maxResults);
    if (!Number.isInteger(maxResults) || maxResults < 0 || maxResults > MAX_RESULTS) {
      return error(400, 'invalid', `Invalid value for field 'maxResults': '${query.maxResults}'. Must be less than or equal to 500`);
    }
    if (query.filter) return error(400, 'invalid', 'the emulator does not evaluate filters');
    const byZone = this.zones.get(project) ?? new Map<string, EmulatedInstance[]>();

    if (record.kind === 'get') {
      const [zone, name] = [parts[5], parts[7]];
      if (this.unreachable.has(`${project}/${zone}`)) return error(503, 'backendError', `zone ${zone} unavailable`);
      const inst = byZone.get(zone)?.find((i) => i.name === name);
      if (!inst) return error(404, 'notFound', `The resource 'projects/${project}/zones/${zone}/instances/${name}' was not found`);
      record.returned = 1;
      return send(200, inst);
    }

    if (record.kind === 'list') {
      const zone = parts[5];
      if (this.unreachable.has(`${project}/${zone}`)) return error(503, 'backendError', `zone ${zone} unavailable`);
      const all = byZone.get(zone) ?? [];
      const page = this.page(all, query.pageToken, maxResults, `list/${project}/${zone}`);
      if ('error' in page) return error(400, 'invalid', page.error);
      record.returned = page.items.length;
      const selfLink = `https://www.googleapis.com/compute/v1/projects/${project}/zones/${zone}/instances`;
      return send(200, {
        kind: 'compute#instanceList',
        id: `projects/${project}/zones/${zone}/instances`,
        items: page.items,
        ...(page.next ? { nextPageToken: page.next } : {}),
        selfLink,
      });
    }

    // aggregatedList: one flat, zone-ordered sequence cut into pages of maxResults instances.
    const zoneNames = [...byZone.keys()].sort();
    const flat: { zone: string; inst: EmulatedInstance }[] = [];
    for (const z of zoneNames) {
      if (this.unreachable.has(`${project}/${z}`)) continue;
      for (const inst of byZone.get(z)!) flat.push({ zone: z, inst });
    }
    const page = this.page(flat, query.pageToken, maxResults, `aggregated/${project}`);
    if ('error' in page) return error(400, 'invalid', page.error);
    record.returned = page.items.length;
    const items: Record<string, unknown> = {};
    for (const { zone, inst } of page.items) {
      const scoped = (items[`zones/${zone}`] ??= { instances: [] }) as { instances: EmulatedInstance[] };
      scoped.instances.push(inst);
    }
    // Like the API, every known zone appears on every page; one without instances here says so.
    for (const z of zoneNames) {
      items[`zones/${z}`] ??= {
        warning: { code: 'NO_RESULTS_ON_PAGE', message: 'There are no results for scope \'zones/' + z + '\' on this page.', data: [{ key: 'scope', value: `zones/${z}` }] },
      };
    }
    if (!query.pageToken) {
      for (const z of [...this.unreachable].filter((k) => k.startsWith(`${project}/`)).map((k) => k.slice(project.length + 1))) {
        items[`zones/${z}`] = {
          warning: { code: 'UNREACHABLE', message: `Scope zones/${z} is unreachable`, data: [{ key: 'scope', value: `zones/${z}` }] },
        };
      }
    }
    return send(200, {
      kind: 'compute#instanceAggregatedList',
      id: `projects/${project}/aggregated/instances`,
      items,
      ...(page.next ? { nextPageToken: page.next } : {}),
      selfLink: `https://www.googleapis.com/compute/v1/projects/${project}/aggregated/instances`,
    });
  }

  // Page tokens are opaque to clients; here they carry the offset and the listing they belong to.
  private page<T>(all: T[], token: string | undefined, size: number, scope: string): { items: T[]; next?: string } | { error: string } {
    let offset = 0;
    if (token) {
      let decoded: unknown;
      try {
        decoded = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
      } catch {
        return { error: `Invalid value for field 'pageToken': '${token}'` };
      }
      const t = decoded as { scope?: string; offset?: number };
      if (t.scope !== scope || !Number.isInteger(t.offset) || (t.offset as number) < 0) {
        return { error: `Invalid value for field 'pageToken': '${token}'` };
      }
      offset = t.offset as number;
    }
    const effective = size === 0 ? MAX_RESULTS : size;
    const items = all.slice(offset, offset + effective);
    const nextOffset = offset + items.length;
    const next = nextOffset < all.length ? Buffer.from(JSON.stringify({ scope, offset: nextOffset })).toString('base64url') : undefined;
    return { items, next };
  }
}

/** A google-auth-library-shaped client with a fixed token: no ADC lookup, no metadata server. */
export function staticTokenAuthClient(token = 'emulator-token') {
  return {
    async getRequestHeaders(): Promise<Headers> {
      return new Headers({ authorization: `Bearer ${token}` });
    },
    async fetch(url: string | URL, init: RequestInit = {}): Promise<Response> {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      return fetch(url, { method: init.method, body: init.body, signal: init.signal, headers });
    },
  };
}
