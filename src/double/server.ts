// The HTTP front of the API server double: authentication, RBAC, fault injection, counters,
// and the REST verbs over the Store (routing in router.ts, watch streams in watch-stream.ts).
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { ApiError, badRequest, expired, invalid, PageNotFound, qualifiedResource } from './errors.js';
import { Counters, Faults, type CounterFilter, type CounterRow, type DetailedCounterRow, type FaultPlan, type RequestInfo, type Verb } from './faults.js';
import { ADMIN_PREFIX, serveAdmin } from './admin.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from './patch.js';
import { Authorizer, loadRbacDir, type RbacPolicy, type UserInfo } from './rbac.js';
import { apiVersionOf, type KObject, type ResourceDef } from './resource-def.js';
import { route as routeOf, verbOf, type Route } from './router.js';
import { Store, type Resource } from './store.js';
import { serveWatch, type WatchContext } from './watch-stream.js';
import { reviewEndpoint, selfSubjectAccessReview, selfSubjectReview, selfSubjectRulesReview, SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_REVIEWS, SELF_SUBJECT_RULES_REVIEWS, subjectAccessReview, tokenReview, TOKEN_REVIEWS, type ReviewEndpoint } from './reviews.js';
import { selfSignedCertificate, type TlsMaterial } from './tls.js';
import { encodeOpenApiV2 } from './openapi-proto.js';
import { fieldValidationOf, pruneUnknownOf, strictDecodingMessage, strictPatchError, unknownFieldsOf, warningHeader, type FieldValidation } from './openapi-validation.js';
import { dryRunOf, dryRunOfBody } from './dryrun.js';
import { buildTable, tableRequested, type TableOptions } from './table.js';
import { decodeSelfReview, KUBE_PROTOBUF } from './review-proto.js';

export interface UserSpec {
  name: string;
  token: string;
  groups?: string[];
}

export interface ApiServerDoubleOptions {
  /** Port on 127.0.0.1 (default 0: ephemeral). */
  port?: number;
  /** Change events kept for watch resumption (default 10,000). */
  historySize?: number;
  /** RBAC: a folder of YAML manifests, or a parsed policy. Without it every request is allowed. */
  rbac?: string | RbacPolicy;
  /** Bearer tokens and who they authenticate as. */
  users?: UserSpec[];
  /** Token of the built-in admin (group system:masters); random by default. */
  adminToken?: string;
  /** How often watches that asked for bookmarks get one (default 1000 ms; kube-apiserver: ~1 min). */
  bookmarkIntervalMs?: number;
  /** Unsent watch bytes after which a watcher counts as stuck and is closed (default 128 MiB). */
  maxWatchBufferBytes?: number;
  /** Seed of the fault-injection random generator (default 1). */
  seed?: number;
  /** Resource table (default: DEFAULT_RESOURCES). */
  resources?: readonly ResourceDef[];
  /** Serve HTTPS: `true` makes a self-signed certificate for 127.0.0.1 (needs openssl). */
  tls?: boolean | TlsMaterial;
  logger?: Logger;
}

export interface ApiServerDouble {
  /** `http://127.0.0.1:<port>`, or `https://…` with `tls`. */
  readonly url: string;
  /** PEM certificate clients must trust, with `tls`. */
  readonly caCertificate?: string;
  readonly port: number;
  /** Kubeconfig YAML for the admin user. */
  readonly kubeconfig: string;
  readonly adminToken: string;
  readonly store: Store;
  readonly faults: Faults;
  /** Kubeconfig YAML authenticating as a user given in `options.users` (or `admin`). */
  kubeconfigFor(user: string): string;
  counters(): CounterRow[];
  /** Counter rows that also name the user and the HTTP status answered (requests already answered). */
  detailedCounters(): DetailedCounterRow[];
  /** Sum over counter rows; a `user` or `code` filter counts answered requests only. */
  count(filter?: CounterFilter): number;
  resetCounters(): void;
  /** Ends every open watch stream now (clients see the stream end and re-watch). */
  closeWatches(): void;
  /** Forgets the event history: watches resuming from an older resourceVersion get 410. */
  compactHistory(): void;
  /** Holds back watch events (writes still succeed) until resumeWatches(). */
  pauseWatches(): void;
  resumeWatches(): void;
  /** Open watch streams. */
  watchCount(): number;
  /**
   * Calls `listener` with each resource request once authenticated, routed and authorized, before
   * faults and handling (a chaos test attributes writes to users as they arrive). Returns an unsubscribe.
   */
  onRequest(listener: (info: RequestInfo) => void): () => void;
  /** Stops listening and drops every connection; state is kept for restart(). */
  stop(): Promise<void>;
  /** Listens again on the same port with the same state. */
  restart(): Promise<void>;
}

const MAX_BODY = 3 * 1024 * 1024;
const CONTINUE_TTL_MS = 5 * 60_000;
const COMMA = Buffer.from(',');
const LIST_END = Buffer.from(']}');
const MAX_SNAPSHOTS = 256;

const JSON_PATCH = 'application/json-patch+json';
const MERGE_PATCH = 'application/merge-patch+json';
const STRATEGIC_PATCH = 'application/strategic-merge-patch+json';
const APPLY_PATCH = 'application/apply-patch+yaml';
const SERVER_SIDE_APPLY_REFUSED = 'server-side apply is not supported by the API server double (it keeps no field ownership, so it could not report conflicts or remove fields dropped from a configuration): use client-side apply (kubectl apply without --server-side)';

const OPTIONS_KIND: Partial<Record<Verb, string>> = { create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions', delete: 'DeleteOptions', deletecollection: 'DeleteOptions' };

interface Snapshot {
  items: KObject[];
  rv: number;
  expires: number;
}

function kubeconfigYaml(url: string, user: string, token: string, caPem: string | undefined): string {
  // Plain HTTP: client-node 1.4.0 only accepts it with insecure-skip-tls-verify set.
  const trust = caPem ? `    certificate-authority-data: ${Buffer.from(caPem).toString('base64')}` : '    insecure-skip-tls-verify: true';
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: apiserver-double',
    '  cluster:',
    `    server: ${url}`,
    trust,
    'users:',
    `- name: ${JSON.stringify(user)}`,
    '  user:',
    `    token: ${JSON.stringify(token)}`,
    'contexts:',
    '- name: apiserver-double',
    '  context:',
    '    cluster: apiserver-double',
    `    user: ${JSON.stringify(user)}`,
    '    namespace: default',
    'current-context: apiserver-double',
    '',
  ].join('\n');
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new ApiError(413, 'BadRequest', `the request body is larger than ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJsonBody(buf: Buffer): unknown {
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw badRequest(`the request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * A create or update body. A custom resource's must name its kind: kube-apiserver decodes it as
 * unstructured JSON, which needs one (handlers/create.go transformDecodeError, with the first 30
 * bytes of the body).
 */
function decodeObject(r: Resource, body: Buffer): unknown {
  const text = body.toString('utf8');
  const summary = body.length > 30 ? `${body.subarray(0, 30).toString('utf8')} ...` : text;
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw badRequest(`the object provided is unrecognized (must be of type ${r.kind}): couldn't get version/kind; json parse error: ${goJsonError(err, text)} (${summary})`);
  }
  if (r.custom && obj !== null && typeof obj === 'object' && !Array.isArray(obj) && !(obj as { kind?: unknown }).kind) {
    throw badRequest(`the object provided is unrecognized (must be of type ${r.kind}): Object 'Kind' is missing in '${text}' (${summary})`);
  }
  return obj;
}

/** Go's encoding/json words for a JSON syntax error, as far as they can be told from JavaScript's. */
function goJsonError(err: unknown, text: string): string {
  const m = err instanceof Error ? err.message : String(err);
  const at = m.match(/at position (\d+)/);
  if (/Unexpected end of JSON input|Unterminated|end of data/i.test(m) || (at && Number(at[1]) >= text.trimEnd().length)) return 'unexpected end of JSON input';
  return m.charAt(0).toLowerCase() + m.slice(1);
}

function goJsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v;
}

/**
 * A patch body, refused as kube-apiserver's patch handler refuses one it cannot decode (400 with
 * Go's decoder error; k8s.io/apiserver handlers/patch.go): JSON and merge patches say "error
 * decoding patch", a strategic merge patch only the decoder's words.
 */
function decodePatch(contentType: string, body: Buffer): unknown {
  const prefix = contentType === STRATEGIC_PATCH ? '' : 'error decoding patch: ';
  const text = body.toString('utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw badRequest(`${prefix}${goJsonError(err, text)}`);
  }
  if (contentType === JSON_PATCH && !Array.isArray(v)) throw badRequest(`${prefix}json: cannot unmarshal ${goJsonType(v)} into Go value of type []handlers.jsonPatchOp`);
  if (contentType !== JSON_PATCH && (v === null || typeof v !== 'object' || Array.isArray(v))) {
    throw badRequest(`${prefix}json: cannot unmarshal ${goJsonType(v)} into Go value of type map[string]interface {}`);
  }
  return v;
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function listKind(r: Resource): string {
  return `${r.kind}List`;
}

export class ApiServer implements ApiServerDouble {
  readonly store: Store;
  readonly faults: Faults;
  readonly adminToken: string;
  private readonly counterTable = new Counters();
  private readonly tokens = new Map<string, UserInfo>();
  private readonly authorizer?: Authorizer;
  private readonly log: Logger;
  private readonly bookmarkIntervalMs: number;
  private server?: http.Server;
  private readonly sockets = new Set<Socket>();
  private readonly watches = new Set<() => void>();
  private readonly snapshots = new Map<string, Snapshot>();
  private portNumber: number;
  private readonly tls?: TlsMaterial;
  private readonly watchContext: WatchContext;
  private readonly requestListeners = new Set<(info: RequestInfo) => void>();
  private watchCutTimer: NodeJS.Timeout | undefined;

  constructor(options: ApiServerDoubleOptions = {}) {
    if (options.tls === true) this.tls = selfSignedCertificate();
    else if (options.tls) {
      if (!options.tls.key || !options.tls.cert) throw new Error('tls: needs PEM key and cert');
      this.tls = options.tls;
    }
    this.store = new Store({ historySize: options.historySize, resources: options.resources });
    this.faults = new Faults(options.seed ?? 1);
    this.log = options.logger ?? silentLogger;
    this.portNumber = options.port ?? 0;
    if (!Number.isInteger(this.portNumber) || this.portNumber < 0 || this.portNumber > 65535) throw new Error(`port: must be an integer in 0..65535, got ${options.port}`);
    this.bookmarkIntervalMs = options.bookmarkIntervalMs ?? 1000;
    this.watchContext = { store: this.store, bookmarkIntervalMs: this.bookmarkIntervalMs, maxBufferBytes: options.maxWatchBufferBytes ?? 128 * 1024 * 1024, track: (c) => this.watches.add(c), untrack: (c) => this.watches.delete(c) };
    this.adminToken = options.adminToken ?? randomBytes(16).toString('hex');
    this.tokens.set(this.adminToken, { name: 'admin', groups: ['system:masters', 'system:authenticated'] });
    for (const u of options.users ?? []) {
      if (!u.name || !u.token) throw new Error(`users: each user needs a name and a token, got ${JSON.stringify(u)}`);
      if (this.tokens.has(u.token)) throw new Error(`users: token of "${u.name}" is already used by another user`);
      const groups = [...(u.groups ?? [])];
      const sa = u.name.match(/^system:serviceaccount:([^:]+):[^:]+$/);
      if (sa) groups.push('system:serviceaccounts', `system:serviceaccounts:${sa[1]}`);
      this.tokens.set(u.token, { name: u.name, groups: [...groups, 'system:authenticated'] });
    }
    this.faults.onPlan((plan) => this.planApplied(plan));
    if (options.rbac !== undefined) this.authorizer = new Authorizer(typeof options.rbac === 'string' ? loadRbacDir(options.rbac) : options.rbac);
  }

  get port(): number {
    return this.portNumber;
  }

  get url(): string {
    return `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.portNumber}`;
  }

  get caCertificate(): string | undefined {
    return this.tls?.cert;
  }

  get kubeconfig(): string {
    return kubeconfigYaml(this.url, 'admin', this.adminToken, this.tls?.cert);
  }

  kubeconfigFor(user: string): string {
    for (const [token, info] of this.tokens) if (info.name === user) return kubeconfigYaml(this.url, user, token, this.tls?.cert);
    throw new Error(`kubeconfigFor: no user "${user}" (known: ${[...this.tokens.values()].map((u) => u.name).join(', ')})`);
  }

  counters(): CounterRow[] {
    return this.counterTable.list();
  }

  detailedCounters(): DetailedCounterRow[] {
    return this.counterTable.listDetailed();
  }

  count(filter?: CounterFilter): number {
    return this.counterTable.count(filter);
  }

  resetCounters(): void {
    this.counterTable.reset();
  }

  closeWatches(): void {
    for (const close of [...this.watches]) close();
  }

  compactHistory(): void {
    this.store.compactHistory();
    this.snapshots.clear();
  }

  pauseWatches(): void {
    this.store.hub.pause();
  }

  resumeWatches(): void {
    this.store.hub.resume();
  }

  watchCount(): number {
    return this.watches.size;
  }

  onRequest(listener: (info: RequestInfo) => void): () => void {
    this.requestListeners.add(listener);
    return () => this.requestListeners.delete(listener);
  }

  private notifyRequest(info: RequestInfo): void {
    for (const l of this.requestListeners) l(info);
  }

  /** A fault plan's watch cuts (history first, so resumes get 410) and the blackout's cut of open watches. */
  private cutWatches(expireHistory: boolean): void {
    if (expireHistory) this.compactHistory();
    this.closeWatches();
  }

  private planApplied(plan: FaultPlan): void {
    clearInterval(this.watchCutTimer);
    this.watchCutTimer = undefined;
    if (plan.blackout) this.closeWatches();
    const w = plan.watchCloses;
    if (w) {
      this.watchCutTimer = setInterval(() => {
        this.cutWatches(w.expireHistory === true);
        this.faults.watchClosesDone++;
      }, w.everyMs);
      this.watchCutTimer.unref();
    }
  }

  async start(): Promise<void> {
    if (this.server) throw new Error('the API server double is already running');
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      void this.handle(req, res);
    };
    const server: http.Server = this.tls ? https.createServer({ key: this.tls.key, cert: this.tls.cert, keepAlive: true }, handler) : http.createServer({ keepAlive: true }, handler);
    // Idle connections are kept as long as kube-apiserver keeps them (its secure serving sets a
    // 90 s IdleTimeout), not Node's 5 s: a client pool that a real server would keep is not torn
    // down under it mid-burst.
    server.keepAliveTimeout = 90_000;
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.portNumber, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.portNumber = (server.address() as AddressInfo).port;
    this.server = server;
    this.log.info({ url: this.url }, 'API server double listening');
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.closeWatches();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
    this.log.info({ url: this.url }, 'API server double stopped');
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  // ------------------------------------------------------------------ request handling

  private authenticate(req: http.IncomingMessage): UserInfo {
    const auth = req.headers.authorization;
    if (!auth) return { name: 'system:anonymous', groups: ['system:unauthenticated'] };
    const m = auth.match(/^Bearer\s+(\S+)$/i);
    const user = m ? this.tokens.get(m[1]) : undefined;
    if (!user) throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    return user;
  }

  /** Answers `code` with `body`; returns the status. */
  private send(res: http.ServerResponse, code: number, body: string | object | Buffer, headers: Record<string, string | string[]> = {}): number {
    if (res.headersSent || res.destroyed) return code;
    const payload = Buffer.isBuffer(body) ? body : typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), 'Cache-Control': 'no-cache, private', ...headers });
    res.end(payload);
    return code;
  }

  /** Answers a metav1.Status for `err`; returns the status. */
  private sendError(res: http.ServerResponse, err: unknown): number {
    const e = err instanceof ApiError ? err : new ApiError(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`);
    if (!(err instanceof ApiError)) this.log.error({ err }, 'API server double: unexpected error');
    if (e instanceof PageNotFound) return this.send(res, 404, '404 page not found\n', { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' });
    return this.send(res, e.code, e.toStatus(), e.headers);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // The counter row of this request (verb, resource, group, subresource) once routed, and the
    // status answered: recorded with the user when the request is done.
    let row: [string, string, string, string] | undefined;
    let userName = '';
    let answered = 0;
    const userAgent = String(req.headers['user-agent'] ?? '');
    try {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (url.pathname.startsWith(ADMIN_PREFIX)) {
        const [code, out] = await serveAdmin({ faults: this.faults, cutWatches: (e) => this.cutWatches(e) }, req.method ?? 'GET', url, this.authenticate(req), () => readBody(req));
        this.send(res, code, out);
        return;
      }
      if (this.faults.blackout()) {
        // Down for everyone but the admin endpoint: no answer, not counted.
        if (this.faults.blackout() === 'hang') await this.faults.blackoutOver();
        req.socket.destroy();
        return;
      }
      const user = this.authenticate(req);
      userName = user.name;
      const method = req.method ?? 'GET';
      const review = reviewEndpoint(url.pathname);
      if (review) {
        // Create-only and never stored: counted and authorized as "create <plural>.<group>".
        this.counterTable.record('create', review.plural, review.group, '', userAgent);
        row = ['create', review.plural, review.group, ''];
        if (method !== 'POST') throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
        const info: RequestInfo = { verb: 'create', resource: review.plural, group: review.group, subresource: '', namespace: '', name: '', userAgent, user: user.name };
        if (this.authorizer && !this.authorizer.authorizeResource(user, { verb: 'create', apiGroup: review.group, resource: review.plural, subresource: '', namespace: '', name: '' })) {
          throw this.forbidden(user, info);
        }
        this.notifyRequest(info);
        const fault = this.faults.decide(info);
        if (fault.latencyMs > 0) await delay(fault.latencyMs);
        if (fault.error) throw fault.error;
        const raw = await readBody(req);
        const body = String(req.headers['content-type'] ?? '').startsWith(KUBE_PROTOBUF) ? decodeSelfReview(raw) : parseJsonBody(raw);
        const out = this.review(review, body, user);
        answered = this.send(res, 201, out);
        return;
      }
      const route = routeOf(url.pathname, this.store.resources, (g, v, p) => this.store.findResource(g, v, p));
      if (route.kind === 'nonresource') {
        this.counterTable.record('get', '', '', url.pathname, userAgent);
        row = ['get', '', '', url.pathname];
        if (method !== 'GET' && method !== 'HEAD') throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
        if (this.authorizer && !this.authorizer.authorizePath(user, { verb: 'get', path: url.pathname })) {
          throw new ApiError(403, 'Forbidden', `forbidden: User "${user.name}" cannot get path "${url.pathname}"`);
        }
        if (route.body === undefined) throw new PageNotFound();
        if (url.pathname === '/openapi/v2' && String(req.headers.accept ?? '').includes('protobuf')) {
          // kubectl asks for protobuf only; other clients get JSON.
          const pb = encodeOpenApiV2(route.body as Record<string, unknown>);
          res.writeHead(200, { 'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', 'Content-Length': pb.length });
          res.end(pb);
          answered = 200;
          return;
        }
        if (typeof route.body === 'string') {
          res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end(route.body);
          answered = 200;
        } else answered = this.send(res, 200, route.body);
        return;
      }
      const q = url.searchParams;
      const verb = verbOf(method, route, q);
      if ((verb === 'create' || verb === 'deletecollection') && route.resource.namespaced && !route.namespace) {
        // The all-namespaces path of a namespaced resource only serves list and watch.
        throw new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource`);
      }
      let name = route.name;
      if ((verb === 'list' || verb === 'watch') && !name) {
        // kube-apiserver authorizes a metadata.name field selector as a request for that name.
        const m = (q.get('fieldSelector') ?? '').match(/^metadata\.name=([^,]+)$/);
        if (m) name = m[1];
      }
      const info: RequestInfo = { verb, resource: route.resource.plural, group: route.resource.group, subresource: route.subresource, namespace: route.namespace, name, userAgent, user: user.name };
      this.counterTable.record(verb, info.resource, info.group, info.subresource, userAgent);
      row = [verb, info.resource, info.group, info.subresource];
      if (this.authorizer && !this.authorizer.authorizeResource(user, { verb, apiGroup: info.group, resource: info.resource, subresource: info.subresource, namespace: info.namespace, name })) {
        throw this.forbidden(user, info);
      }
      this.notifyRequest(info);
      const fault = this.faults.decide(info);
      if (fault.latencyMs > 0) await delay(fault.latencyMs);
      if (fault.error) throw fault.error;
      if (verb === 'watch') {
        const table = this.tableOptions(route.resource, req, q);
        // kubectl get -w asks for Tables: each event carries a one-row Table.
        const encode = table ? (o: KObject) => JSON.stringify(buildTable(route.resource, [o], { resourceVersion: o.metadata?.resourceVersion }, table)) : undefined;
        serveWatch(this.watchContext, req, res, route, q, fault.drop, encode);
        answered = 200;
        return;
      }
      const body = method === 'GET' ? Buffer.alloc(0) : await readBody(req);
      // kubectl's typed generators (`create namespace`, `create deployment`, …) send Kubernetes
      // protobuf, which the double decodes only for reviews: 415 names the way round instead of a
      // JSON parse error.
      if (body.length > 0 && String(req.headers['content-type'] ?? '').startsWith(KUBE_PROTOBUF)) {
        throw new ApiError(415, 'UnsupportedMediaType', `the API server double accepts protobuf bodies only for self-subject reviews; send ${route.kind === 'resource' ? route.resource.kind : 'the object'} as JSON (for kubectl: create -f or apply -f a manifest instead of a generator such as "kubectl create namespace")`);
      }
      const warnings: string[] = [];
      const [code, out] = await this.serve(verb, route, q, body, req, warnings);
      if (fault.drop) {
        // The write happened; the client never learns it.
        answered = code;
        req.socket.destroy();
        return;
      }
      answered = this.send(res, code, out, warnings.length > 0 ? { Warning: warnings.map(warningHeader) } : {});
    } catch (err) {
      answered = this.sendError(res, err);
    } finally {
      if (row) this.counterTable.recordAnswered(row[0], row[1], row[2], row[3], userAgent, userName, answered);
    }
  }

  private review(review: ReviewEndpoint, body: unknown, user: UserInfo): object {
    switch (review) {
      case TOKEN_REVIEWS:
        return tokenReview(body, (t) => this.tokens.get(t));
      case SELF_SUBJECT_ACCESS_REVIEWS:
        return selfSubjectAccessReview(body, this.authorizer, user);
      case SELF_SUBJECT_RULES_REVIEWS:
        return selfSubjectRulesReview(body, this.authorizer, user);
      case SELF_SUBJECT_REVIEWS:
        return selfSubjectReview(body, user);
      default:
        return subjectAccessReview(body, this.authorizer);
    }
  }

  private forbidden(user: UserInfo, info: RequestInfo): ApiError {
    const res = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
    // The subject names the resource without its subresource; the verb's object names both.
    const subject = info.name ? `${qualifiedResource(info.group, info.resource)} "${info.name}"` : qualifiedResource(info.group, info.resource);
    const scope = info.namespace ? `in the namespace "${info.namespace}"` : 'at the cluster scope';
    return new ApiError(403, 'Forbidden', `${subject} is forbidden: User "${user.name}" cannot ${info.verb} resource "${res}" in API group "${info.group}" ${scope}`, {
      name: info.name || undefined,
      group: info.group,
      kind: info.resource,
    });
  }

  private async serve(verb: Verb, route: Route, q: URLSearchParams, body: Buffer, req: http.IncomingMessage, warnings: string[]): Promise<[number, string | object | Buffer]> {
    const r = route.resource;
    const optionsKind = OPTIONS_KIND[verb];
    const dryRun = optionsKind ? dryRunOf(q, optionsKind) : false;
    const validation = fieldValidationOf(q);
    // Unknown fields of a create or update body: refused under Strict, otherwise dropped (with a
    // warning under Warn, the default), as kube-apiserver decodes a body into its Go types.
    const checkFields = (input: unknown): unknown => {
      const unknown = validation === 'Ignore' ? [] : unknownFieldsOf(r, input);
      if (unknown.length > 0 && validation === 'Strict') throw badRequest(`${r.kind} in version "${r.version}" cannot be handled as a ${r.kind}: ${strictDecodingMessage(unknown)}`);
      warnings.push(...unknown.map((f) => `unknown field "${f}"`));
      return pruneUnknownOf(r, input);
    };
    switch (verb) {
      case 'get': {
        const obj = this.store.getRef(r.id, route.name, route.namespace);
        const table = this.tableOptions(r, req, q);
        if (table) return [200, buildTable(r, [obj], { resourceVersion: obj.metadata?.resourceVersion }, table)];
        return [200, this.store.encode(obj)];
      }
      case 'list': {
        const table = this.tableOptions(r, req, q);
        const { page, meta } = this.listPage(r, route.namespace, q);
        if (table) return [200, buildTable(r, page, meta, table)];
        // The objects' cached bytes, copied once into the page.
        const parts: Buffer[] = [Buffer.from(`{"kind":${JSON.stringify(listKind(r))},"apiVersion":${JSON.stringify(apiVersionOf(r))},"metadata":${JSON.stringify(meta)},"items":[`)];
        page.forEach((o, i) => {
          if (i > 0) parts.push(COMMA);
          parts.push(this.store.encodeListItemBytes(o, r.custom));
        });
        parts.push(LIST_END);
        return [200, Buffer.concat(parts)];
      }
      case 'create': {
        if (route.subresource) {
          const action = r.actions.find((a) => a.name === route.subresource);
          if (!action) throw new ApiError(405, 'MethodNotAllowed', 'create is not allowed on a subresource');
          return action.create({ store: this.store, namespace: route.namespace, name: route.name, body: parseJsonBody(body), dryRun });
        }
        const obj = this.store.createRef(r.id, checkFields(decodeObject(r, body)), route.namespace || undefined, true, dryRun);
        return [201, dryRun ? obj : this.store.encode(obj)];
      }
      case 'update': {
        const existed = this.store.peek(r.id, route.name, route.namespace) !== undefined;
        const obj = this.store.updateRef(r.id, checkFields(decodeObject(r, body)), { name: route.name, namespace: route.namespace || undefined, subresource: route.subresource ? 'status' : undefined, owned: true, dryRun, uidPrecondition: true });
        return [existed ? 200 : 201, dryRun ? obj : this.store.encode(obj)];
      }
      case 'patch':
        return this.patch(route, q, body, String(req.headers['content-type'] ?? ''), { dryRun, validation, warnings });
      case 'delete': {
        const opts = body.length > 0 ? (parseJsonBody(body) as { preconditions?: { uid?: string; resourceVersion?: string }; dryRun?: unknown }) : {};
        const { object, deleted } = this.store.deleteRef(r.id, route.name, route.namespace || undefined, { preconditions: opts.preconditions, dryRun: dryRun || dryRunOfBody(opts.dryRun) });
        if (deleted && !r.custom && !r.returnDeletedObject) {
          return [200, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: route.name, ...(r.group ? { group: r.group } : {}), kind: r.plural, uid: object.metadata?.uid } }];
        }
        if (deleted && r.returnDeletedObject && !object.metadata?.deletionTimestamp) {
          // A pod deleted at once is answered as it was last written: marked for deletion now,
          // with no grace period left (and its generation bumped by the marking).
          const meta = object.metadata ?? {};
          const marked = { ...meta, deletionTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), deletionGracePeriodSeconds: 0, ...(r.generation ? { generation: (meta.generation ?? 1) + 1 } : {}) };
          return [200, JSON.stringify({ ...object, metadata: marked })];
        }
        return [200, this.store.encode(object)];
      }
      case 'deletecollection': {
        const victims = this.store.listRefs(r.id, { namespace: route.namespace || undefined, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
        // List items of built-in kinds carry no apiVersion and kind.
        const items = victims.map((v) => {
          const deleted = this.store.deleteRef(r.id, v.metadata?.name as string, v.metadata?.namespace, { dryRun }).object;
          if (r.custom) return deleted;
          const { apiVersion: _a, kind: _k, ...item } = deleted;
          return item;
        });
        return [200, { kind: listKind(r), apiVersion: apiVersionOf(r), metadata: { resourceVersion: String(this.store.resourceVersion) }, items }];
      }
      default:
        throw new ApiError(405, 'MethodNotAllowed', `verb ${verb} is not served here`);
    }
  }

  private checkRequestedRv(q: URLSearchParams): void {
    const rv = q.get('resourceVersion');
    if (rv === null || rv === '' || rv === '0') return;
    if (!/^\d+$/.test(rv)) throw badRequest(`invalid resourceVersion "${rv}": must be an integer`);
    if (Number(rv) > this.store.resourceVersion) {
      throw new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${rv}, current: ${this.store.resourceVersion}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
    }
    if (q.get('resourceVersionMatch') === 'Exact' && Number(rv) !== this.store.resourceVersion) {
      throw expired(`resourceVersion ${rv} is too old to serve exactly: only the current state (${this.store.resourceVersion}) is kept`);
    }
  }

  /** Table options when the request asks for a Table (Accept: …;as=Table;g=meta.k8s.io). */
  private tableOptions(r: Resource, req: http.IncomingMessage, q: URLSearchParams): TableOptions | undefined {
    const version = tableRequested(req.headers.accept);
    if (!version) return undefined;
    const include = q.get('includeObject') || 'Metadata';
    if (include !== 'None' && include !== 'Metadata' && include !== 'Object') throw badRequest(`Unable to convert to Table as requested: includeObject: Invalid value: "${include}": must be 'Metadata', 'Object', 'None', or empty`);
    // events.k8s.io Events are printed in their core/v1 form, as kube-apiserver does.
    const convert = r.group === 'events.k8s.io' ? r.mirror?.convert : undefined;
    return {
      version,
      includeObject: include,
      // A watch lives on: ages are computed when each event is sent.
      get now() {
        return new Date();
      },
      convert,
    };
  }

  private listPage(r: Resource, namespace: string, q: URLSearchParams): { page: KObject[]; meta: Record<string, unknown> } {
    const limitRaw = q.get('limit');
    const limit = limitRaw === null || limitRaw === '' ? 0 : Number(limitRaw);
    if (!Number.isInteger(limit) || limit < 0) throw badRequest(`invalid limit "${limitRaw}": must be a non-negative integer`);
    const token = q.get('continue');
    let items: KObject[];
    let rv: number;
    let offset = 0;
    let snapId: string | undefined;
    const hasSelectors = !!(q.get('labelSelector') || q.get('fieldSelector'));
    if (token) {
      let parsed: { id?: string; offset?: number };
      try {
        parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { id?: string; offset?: number };
      } catch {
        throw badRequest(`invalid continue token "${token}"`);
      }
      if (typeof parsed.id !== 'string' || typeof parsed.offset !== 'number') throw badRequest(`invalid continue token "${token}"`);
      const snap = this.snapshots.get(parsed.id);
      if (!snap || snap.expires < Date.now()) {
        this.snapshots.delete(parsed.id);
        throw expired('The provided continue parameter is too old to display a consistent list result. Start a new list without the continue parameter.');
      }
      items = snap.items;
      rv = snap.rv;
      offset = parsed.offset;
      snapId = parsed.id;
    } else {
      this.checkRequestedRv(q);
      items = this.store.listRefs(r.id, { namespace: namespace || undefined, labelSelector: q.get('labelSelector') ?? undefined, fieldSelector: q.get('fieldSelector') ?? undefined });
      rv = this.store.resourceVersion;
    }
    const end = limit > 0 ? Math.min(items.length, offset + limit) : items.length;
    const page = items.slice(offset, end);
    const meta: Record<string, unknown> = { resourceVersion: String(rv) };
    if (end < items.length) {
      // Later pages are served from the same snapshot, as etcd serves them at one revision.
      if (!snapId) {
        snapId = randomUUID();
        this.snapshots.set(snapId, { items, rv, expires: Date.now() + CONTINUE_TTL_MS });
        this.pruneSnapshots();
      }
      meta.continue = Buffer.from(JSON.stringify({ id: snapId, offset: end })).toString('base64url');
      if (!hasSelectors) meta.remainingItemCount = items.length - end;
    } else {
      if (snapId) this.snapshots.delete(snapId);
      // A custom resource's list is unstructured JSON, where an empty continue is still written.
      if (r.custom) meta.continue = '';
    }
    return { page, meta };
  }

  private pruneSnapshots(): void {
    const now = Date.now();
    for (const [id, s] of this.snapshots) if (s.expires < now) this.snapshots.delete(id);
    while (this.snapshots.size > MAX_SNAPSHOTS) this.snapshots.delete(this.snapshots.keys().next().value as string);
  }

  private patch(route: Route, q: URLSearchParams, body: Buffer, contentTypeHeader: string, opts: { dryRun: boolean; validation: FieldValidation; warnings: string[] }): [number, string] {
    const r = route.resource;
    const contentType = contentTypeHeader.split(';')[0].trim().toLowerCase();
    const accepted = r.custom ? [JSON_PATCH, MERGE_PATCH, APPLY_PATCH] : [JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH];
    if (!accepted.includes(contentType)) {
      // kube-apiserver answers a patch type a built-in kind does not take with a bare 415; for a
      // custom resource it lists the types it takes.
      if (!r.custom) throw new ApiError(415, 'UnsupportedMediaType', '415: Unsupported Media Type', {});
      throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`);
    }
    if (contentType === APPLY_PATCH) {
      // Without field ownership an apply would merge with the wrong semantics (no conflicts, no
      // removal of fields dropped from the configuration): refused, never approximated.
      throw new ApiError(415, 'UnsupportedMediaType', SERVER_SIDE_APPLY_REFUSED);
    }
    if (q.has('force')) {
      throw invalid('PatchOptions', 'meta.k8s.io', '', [{ field: 'force', type: 'FieldValueForbidden', detail: 'may not be specified for non-apply patch' }]);
    }
    const sub = route.subresource ? ('status' as const) : undefined;
    const ns = route.namespace || undefined;
    const current = this.store.getRef(r.id, route.name, route.namespace);
    const patchBody = decodePatch(contentType, body);
    let next: unknown;
    if (contentType === JSON_PATCH) next = applyJsonPatch(current, patchBody);
    else if (contentType === MERGE_PATCH) next = applyMergePatch(current, patchBody);
    else next = applyStrategicMergePatch(current, patchBody, r.smp);
    if (opts.validation !== 'Ignore') {
      // Merge patches are checked as sent (what the stored object already holds is not the
      // patch's doing); a JSON patch by its result.
      const unknown = unknownFieldsOf(r, contentType === JSON_PATCH ? next : patchBody);
      if (unknown.length > 0 && opts.validation === 'Strict') throw strictPatchError(contentType === STRATEGIC_PATCH, patchBody, unknown);
      opts.warnings.push(...unknown.map((f) => `unknown field "${f}"`));
    }
    next = pruneUnknownOf(r, next);
    // A resourceVersion left in the patched object (unchanged or set by the patch) is a precondition.
    const updated = this.store.updateRef(r.id, next, { name: route.name, namespace: ns, subresource: sub, owned: true, dryRun: opts.dryRun });
    return [200, this.store.encode(updated)];
  }

  // ------------------------------------------------------------------ watch

}

/** Starts an API server double on 127.0.0.1 and resolves once it accepts connections. */
export async function startApiServerDouble(options: ApiServerDoubleOptions = {}): Promise<ApiServerDouble> {
  const server = new ApiServer(options);
  await server.start();
  return server;
}
