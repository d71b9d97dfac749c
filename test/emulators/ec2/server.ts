// A loopback EC2 Query API emulator for DescribeInstances and AssignIpv6Addresses, speaking the
// real wire format (form-encoded POST in, ec2 XML out) so tests drive the genuine
// @aws-sdk/client-ec2 code path: request serialisation, XML parsing, error decoding and retries.
// It never answers AuthFailure, so any fake credentials work.
//
// Interfaces carry delegated prefixes (ipv4PrefixSet, ipv6PrefixSet). AssignIpv6Addresses with
// Ipv6PrefixCount delegates /80s from the interface's subnet /64, with the failure modes a caller
// must survive: the interface's limit, throttling, an answer lost after the prefix was assigned
// (the connection reset, or held open until the caller gives up or dies), and a read-back lag
// (EC2 is eventually consistent: an assigned prefix may be missing from the next DescribeInstances).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmulatedInterface {
  networkInterfaceId?: string;
  /** Default 'in-use'. */
  status?: string;
  /** Omit for an interface without an attachment. */
  deviceIndex?: number;
  privateIps?: string[];
  publicIp?: string;
  ipv6?: string[];
  /** Delegated IPv4 prefixes (EC2 delegates /28s), in the order EC2 lists them. */
  ipv4Prefixes?: string[];
  /** Delegated IPv6 prefixes (EC2 delegates /80s). AssignIpv6Addresses appends here. */
  ipv6Prefixes?: string[];
  /** The subnet's IPv6 /64 that AssignIpv6Addresses delegates /80s from; default one per interface. */
  subnetIpv6Cidr?: string;
  /** Most IPv6 prefixes the interface takes (the instance type's limit); default no limit. */
  ipv6PrefixLimit?: number;
  /** Attachment's NetworkCardIndex; omitted from the answer when undefined. */
  networkCardIndex?: number;
}

export interface EmulatedInstance {
  instanceId: string;
  /** pending | running | shutting-down | terminated | stopping | stopped; default running. */
  state?: string;
  instanceType?: string;
  availabilityZone?: string;
  privateDnsName?: string;
  publicDnsName?: string;
  /** Top-level ipAddress (the primary interface's public IPv4). */
  publicIp?: string;
  /** Top-level privateIpAddress. */
  privateIp?: string;
  networkInterfaces?: EmulatedInterface[];
  tags?: Record<string, string>;
  reservationId?: string;
}

export interface RecordedRequest {
  action: string;
  instanceIds: string[];
  filters: Array<{ name: string; values: string[] }>;
  maxResults?: number;
  nextToken?: string;
  /** AssignIpv6Addresses: its NetworkInterfaceId and Ipv6PrefixCount. */
  networkInterfaceId?: string;
  ipv6PrefixCount?: number;
  /** HTTP status the emulator answered (0: no answer, the connection was reset or held). */
  status: number;
}

/** How the next AssignIpv6Addresses answer is lost after the prefix was assigned. */
export type LostAnswer = 'reset' | 'hang';

export interface InjectedError {
  code: string;
  message: string;
  status: number;
}

const VALID_ID = /^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$/;
const NS = 'http://ec2.amazonaws.com/doc/2016-11-15/';

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function el(name: string, value: string | number | undefined): string {
  return value === undefined ? '' : `<${name}>${esc(String(value))}</${name}>`;
}

const STATE_CODES: Record<string, number> = { pending: 0, running: 16, 'shutting-down': 32, terminated: 48, stopping: 64, stopped: 80 };

/** The interface's ID as DescribeInstances shows it. */
export function interfaceIdOf(i: EmulatedInstance, idx: number): string {
  return i.networkInterfaces?.[idx]?.networkInterfaceId ?? `eni-${i.instanceId.slice(2)}${idx}`;
}

/** Prefixes assigned but not yet visible (read-back lag), per interface. */
const lagging = new WeakMap<EmulatedInterface, Map<string, number>>();

function visible(ni: EmulatedInterface): string[] {
  const lag = lagging.get(ni);
  return (ni.ipv6Prefixes ?? []).filter((p) => (lag?.get(p) ?? 0) <= 0);
}

function instanceXML(i: EmulatedInstance): string {
  const state = i.state ?? 'running';
  const nis = (i.networkInterfaces ?? [])
    .map((ni, idx) => {
      const id = interfaceIdOf(i, idx);
      const priv = (ni.privateIps ?? [])
        .map((ip, n) => `<item>${el('privateIpAddress', ip)}${el('primary', n === 0 ? 'true' : 'false')}${n === 0 && ni.publicIp ? `<association>${el('publicIp', ni.publicIp)}</association>` : ''}</item>`)
        .join('');
      const v6 = (ni.ipv6 ?? []).map((ip) => `<item>${el('ipv6Address', ip)}</item>`).join('');
      const attachment =
        ni.deviceIndex === undefined
          ? ''
          : `<attachment>${el('attachmentId', `eni-attach-${idx}`)}${el('deviceIndex', ni.deviceIndex)}${el('networkCardIndex', ni.networkCardIndex)}${el('status', 'attached')}</attachment>`;
      return (
        `<item>${el('networkInterfaceId', id)}${el('status', ni.status ?? 'in-use')}${el('privateIpAddress', ni.privateIps?.[0])}` +
        `${attachment}${ni.publicIp ? `<association>${el('publicIp', ni.publicIp)}</association>` : ''}` +
        `<privateIpAddressesSet>${priv}</privateIpAddressesSet><ipv6AddressesSet>${v6}</ipv6AddressesSet>` +
        `<ipv4PrefixSet>${(ni.ipv4Prefixes ?? []).map((p) => `<item>${el('ipv4Prefix', p)}</item>`).join('')}</ipv4PrefixSet>` +
        `<ipv6PrefixSet>${(visible(ni)).map((p) => `<item>${el('ipv6Prefix', p)}</item>`).join('')}</ipv6PrefixSet></item>`
      );
    })
    .join('');
  const tags = Object.entries(i.tags ?? {})
    .map(([k, v]) => `<item>${el('key', k)}${el('value', v)}</item>`)
    .join('');
  return (
    `<item>${el('instanceId', i.instanceId)}${el('imageId', 'ami-12345678')}` +
    `<instanceState>${el('code', STATE_CODES[state] ?? 16)}${el('name', state)}</instanceState>` +
    `${el('privateDnsName', i.privateDnsName ?? '')}${el('dnsName', i.publicDnsName ?? '')}${el('instanceType', i.instanceType ?? 'm5.large')}` +
    `<placement>${el('availabilityZone', i.availabilityZone ?? 'us-east-1a')}${el('tenancy', 'default')}</placement>` +
    `${el('privateIpAddress', i.privateIp)}${el('ipAddress', i.publicIp)}` +
    `<tagSet>${tags}</tagSet><networkInterfaceSet>${nis}</networkInterfaceSet></item>`
  );
}

function errorXML(code: string, message: string, requestId: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${esc(code)}</Code><Message>${esc(message)}</Message></Error></Errors><RequestID>${requestId}</RequestID></Response>`;
}

function matchesFilter(i: EmulatedInstance, name: string, values: string[]): boolean {
  const tags = i.tags ?? {};
  if (name === 'private-dns-name') return values.includes(i.privateDnsName ?? '');
  if (name === 'instance-state-name') return values.includes(i.state ?? 'running');
  if (name === 'instance-id') return values.includes(i.instanceId);
  if (name === 'tag-key') return values.some((v) => v in tags);
  if (name.startsWith('tag:')) {
    const k = name.slice(4);
    return k in tags && values.includes(tags[k]!);
  }
  throw new Error(`unsupported filter ${name}`);
}

export class EC2Emulator {
  readonly instances = new Map<string, EmulatedInstance>();
  readonly requests: RecordedRequest[] = [];
  /** Page size used when a request gives no MaxResults (EC2 would return everything). */
  defaultPageSize = Infinity;
  private server: Server | undefined;
  private injected: InjectedError[] = [];
  private assignInjected: Array<InjectedError | { lose: LostAnswer }> = [];
  private held: ServerResponse[] = [];
  private requestCounter = 0;
  private subnetCounter = 0;
  private readonly nextPrefix = new Map<string, number>();
  /** DescribeInstances answers an assigned prefix is missing from before it shows (default 0). */
  assignLag = 0;
  endpoint = '';

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.endpoint = `http://127.0.0.1:${port}`;
    return this.endpoint;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.releaseHeld();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** Forgets instances, recorded requests and pending injected errors. */
  reset(): this {
    this.instances.clear();
    this.requests.length = 0;
    this.injected = [];
    this.assignInjected = [];
    this.nextPrefix.clear();
    this.subnetCounter = 0;
    this.releaseHeld();
    this.defaultPageSize = Infinity;
    this.assignLag = 0;
    return this;
  }

  /** Closes the connections of answers held by loseNextAssignAnswer('hang'). */
  releaseHeld(): void {
    for (const res of this.held.splice(0)) res.socket?.destroy();
  }

  add(...instances: EmulatedInstance[]): this {
    for (const i of instances) this.instances.set(i.instanceId, i);
    return this;
  }

  /** The next `n` requests answer 503 RequestLimitExceeded. */
  throttleNext(n = 1): this {
    for (let k = 0; k < n; k++) this.injected.push({ code: 'RequestLimitExceeded', message: 'Request limit exceeded.', status: 503 });
    return this;
  }

  /** The next request answers this error. */
  failNext(code: string, message: string, status = 400): this {
    this.injected.push({ code, message, status });
    return this;
  }

  /** The next AssignIpv6Addresses answers this error without assigning anything. */
  failNextAssign(code: string, message: string, status = 400): this {
    this.assignInjected.push({ code, message, status });
    return this;
  }

  /** The next `n` AssignIpv6Addresses calls answer 503 RequestLimitExceeded, assigning nothing. */
  throttleNextAssign(n = 1): this {
    for (let k = 0; k < n; k++) this.assignInjected.push({ code: 'RequestLimitExceeded', message: 'Request limit exceeded.', status: 503 });
    return this;
  }

  /** The next AssignIpv6Addresses assigns its prefix, then resets the connection or never answers. */
  loseNextAssignAnswer(how: LostAnswer = 'reset'): this {
    this.assignInjected.push({ lose: how });
    return this;
  }

  describeCalls(): number {
    return this.requests.filter((r) => r.action === 'DescribeInstances').length;
  }

  /** AssignIpv6Addresses calls received (for one interface, when given), whatever their answer. */
  assignCalls(networkInterfaceId?: string): number {
    return this.requests.filter((r) => r.action === 'AssignIpv6Addresses' && (networkInterfaceId === undefined || r.networkInterfaceId === networkInterfaceId)).length;
  }

  /** The interface with this ID, and its instance. */
  findInterface(id: string): { instance: EmulatedInstance; ni: EmulatedInterface } | undefined {
    for (const instance of this.instances.values()) {
      const idx = (instance.networkInterfaces ?? []).findIndex((_, k) => interfaceIdOf(instance, k) === id);
      if (idx >= 0) return { instance, ni: instance.networkInterfaces![idx]! };
    }
    return undefined;
  }

  private assign(rec: RecordedRequest, params: URLSearchParams, requestId: string, res: ServerResponse, send: (status: number, body: string) => void, fail: (status: number, code: string, message: string) => void): void {
    rec.networkInterfaceId = params.get('NetworkInterfaceId') ?? undefined;
    if (params.has('Ipv6PrefixCount')) rec.ipv6PrefixCount = Number(params.get('Ipv6PrefixCount'));
    const injected = this.assignInjected[0];
    if (injected && 'code' in injected) {
      this.assignInjected.shift();
      return fail(injected.status, injected.code, injected.message);
    }
    if (!rec.networkInterfaceId) return fail(400, 'MissingParameter', 'The request must contain the parameter NetworkInterfaceId');
    // Only the prefix form is emulated; addresses (Ipv6AddressCount, Ipv6Addresses) are not.
    if (params.has('Ipv6AddressCount') || params.has('Ipv6Addresses.1') || params.has('Ipv6Prefix.1')) {
      return fail(400, 'InvalidParameterCombination', 'the EC2 emulator only supports Ipv6PrefixCount');
    }
    const count = rec.ipv6PrefixCount;
    if (count === undefined || !Number.isInteger(count) || count < 1) return fail(400, 'InvalidParameterValue', `Value (${params.get('Ipv6PrefixCount')}) for parameter ipv6PrefixCount is invalid.`);
    const found = this.findInterface(rec.networkInterfaceId);
    if (!found) return fail(400, 'InvalidNetworkInterfaceID.NotFound', `The networkInterface ID '${rec.networkInterfaceId}' does not exist`);
    const { ni } = found;
    const have = ni.ipv6Prefixes?.length ?? 0;
    // EC2 counts delegated prefixes against the interface's address limit; this is the error
    // code it gives for that limit on AssignPrivateIpAddresses. The adapter does not depend on it.
    if (have + count > (ni.ipv6PrefixLimit ?? Infinity)) return fail(400, 'PrivateIpAddressLimitExceeded', 'Number of private addresses will exceed limit.');
    ni.subnetIpv6Cidr ??= `2600:1f18:0:${(++this.subnetCounter).toString(16)}::/64`;
    const base = ni.subnetIpv6Cidr.replace(/::\/64$/, '');
    const assigned: string[] = [];
    for (let k = 0; k < count; k++) {
      const n = (this.nextPrefix.get(ni.subnetIpv6Cidr) ?? 0) + 1;
      this.nextPrefix.set(ni.subnetIpv6Cidr, n);
      assigned.push(`${base}:${n.toString(16)}::/80`);
    }
    ni.ipv6Prefixes = [...(ni.ipv6Prefixes ?? []), ...assigned];
    if (this.assignLag > 0) {
      const lag = lagging.get(ni) ?? new Map<string, number>();
      for (const p of assigned) lag.set(p, this.assignLag);
      lagging.set(ni, lag);
    }
    if (injected && 'lose' in injected) {
      this.assignInjected.shift();
      rec.status = 0;
      if (injected.lose === 'reset') res.socket?.destroy();
      else this.held.push(res);
      return;
    }
    send(
      200,
      `<?xml version="1.0" encoding="UTF-8"?>\n<AssignIpv6AddressesResponse xmlns="${NS}">${el('requestId', requestId)}${el('networkInterfaceId', rec.networkInterfaceId)}` +
        `<assignedIpv6Addresses/><assignedIpv6PrefixSet>${assigned.map((p) => el('item', p)).join('')}</assignedIpv6PrefixSet></AssignIpv6AddressesResponse>`,
    );
  }

  /** One DescribeInstances answer has gone by: lagging prefixes come closer to showing. */
  private tickLag(): void {
    for (const i of this.instances.values()) {
      for (const ni of i.networkInterfaces ?? []) {
        const lag = lagging.get(ni);
        if (!lag) continue;
        for (const [p, n] of lag) if (n <= 1) lag.delete(p); else lag.set(p, n - 1);
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const params = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const requestId = `req-${++this.requestCounter}`;
    const rec: RecordedRequest = { action: params.get('Action') ?? '', instanceIds: [], filters: [], status: 200 };
    for (let n = 1; params.has(`InstanceId.${n}`); n++) rec.instanceIds.push(params.get(`InstanceId.${n}`)!);
    for (let n = 1; params.has(`Filter.${n}.Name`); n++) {
      const values: string[] = [];
      for (let v = 1; params.has(`Filter.${n}.Value.${v}`); v++) values.push(params.get(`Filter.${n}.Value.${v}`)!);
      rec.filters.push({ name: params.get(`Filter.${n}.Name`)!, values });
    }
    if (params.has('MaxResults')) rec.maxResults = Number(params.get('MaxResults'));
    if (params.has('NextToken')) rec.nextToken = params.get('NextToken')!;
    this.requests.push(rec);
    const send = (status: number, body: string): void => {
      rec.status = status;
      res.writeHead(status, { 'content-type': 'text/xml;charset=UTF-8', 'x-amzn-requestid': requestId });
      res.end(body);
    };
    const fail = (status: number, code: string, message: string): void => send(status, errorXML(code, message, requestId));

    if (req.method !== 'POST' || (rec.action !== 'DescribeInstances' && rec.action !== 'AssignIpv6Addresses') || params.get('Version') !== '2016-11-15') {
      return fail(400, 'InvalidAction', `The action ${rec.action} is not valid for this web service.`);
    }
    if (rec.action === 'AssignIpv6Addresses') return this.assign(rec, params, requestId, res, send, fail);
    const injected = this.injected.shift();
    if (injected) return fail(injected.status, injected.code, injected.message);

    if (rec.instanceIds.length > 0 && rec.maxResults !== undefined) {
      return fail(400, 'InvalidParameterCombination', 'The parameter instancesSet cannot be used with the parameter maxResults');
    }
    if (rec.maxResults !== undefined && (rec.maxResults < 5 || rec.maxResults > 1000)) {
      return fail(400, 'InvalidParameterValue', `Value ( ${rec.maxResults} ) for parameter maxResults is invalid. Expecting a value between 5 and 1000.`);
    }
    const malformed = rec.instanceIds.filter((id) => !VALID_ID.test(id));
    if (malformed.length > 0) return fail(400, 'InvalidInstanceID.Malformed', `Invalid id: "${malformed[0]}"`);
    const missing = rec.instanceIds.filter((id) => !this.instances.has(id));
    if (missing.length === 1) return fail(400, 'InvalidInstanceID.NotFound', `The instance ID '${missing[0]}' does not exist`);
    if (missing.length > 1) return fail(400, 'InvalidInstanceID.NotFound', `The instance IDs '${missing.join(', ')}' do not exist`);

    let matched = rec.instanceIds.length > 0 ? rec.instanceIds.map((id) => this.instances.get(id)!) : [...this.instances.values()];
    try {
      for (const f of rec.filters) matched = matched.filter((i) => matchesFilter(i, f.name, f.values));
    } catch (err) {
      return fail(400, 'InvalidParameterValue', (err as Error).message);
    }
    const start = rec.nextToken ? Number(Buffer.from(rec.nextToken, 'base64url').toString()) : 0;
    if (!Number.isInteger(start) || start < 0 || start > matched.length) return fail(400, 'InvalidParameterValue', 'Invalid NextToken');
    const size = rec.maxResults ?? this.defaultPageSize;
    const page = matched.slice(start, start + size);
    const next = start + size < matched.length ? Buffer.from(String(start + size)).toString('base64url') : undefined;
    // This answer is built from what is visible now; the lag counts down after it.
    const reservations = page
      .map((i) => `<item>${el('reservationId', i.reservationId ?? `r-${i.instanceId.slice(2)}`)}${el('ownerId', '123456789012')}<groupSet/><instancesSet>${instanceXML(i)}</instancesSet></item>`)
      .join('');
    this.tickLag();
    send(
      200,
      `<?xml version="1.0" encoding="UTF-8"?>\n<DescribeInstancesResponse xmlns="${NS}">${el('requestId', requestId)}<reservationSet>${reservations}</reservationSet>${el('nextToken', next)}</DescribeInstancesResponse>`,
    );
  }
}
