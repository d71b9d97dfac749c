// Watch streams: replay from a resourceVersion, live events, selectors, bookmarks, timeouts.
import type http from 'node:http';
import { ApiError, badRequest, expired, invalid, type FieldError } from './errors.js';
import { apiVersionOf, type KObject } from './resource-def.js';
import { boolParam, type Route } from './router.js';
import { fieldSelectorFor, matchesLabels, parseLabelSelector } from './selectors.js';
import type { Store } from './store.js';
import type { ChangeEvent } from './watch.js';

export interface WatchContext {
  store: Store;
  bookmarkIntervalMs: number;
  /** Unsent bytes after which a live watcher counts as stuck and its stream is ended. */
  maxBufferBytes: number;
  /** Registers the stream's close function (for closeWatches and stop) and forgets it. */
  track(close: () => void): void;
  untrack(close: () => void): void;
}

/**
 * Serves `?watch=true`: newline-delimited JSON events over a chunked 200 response, as
 * kube-apiserver streams them. `drop` cuts the connection right after the headers. `encode`
 * turns an event's object into JSON (default: the object itself; a Table for kubectl get -w).
 */
export function serveWatch(ctx: WatchContext, req: http.IncomingMessage, res: http.ServerResponse, route: Route, q: URLSearchParams, drop: boolean, encode: (o: KObject) => string = (o) => ctx.store.encode(o)): void {
  const r = route.resource;
  const labels = parseLabelSelector(q.get('labelSelector'));
  const fields = fieldSelectorFor(r, q.get('fieldSelector'));
  if (route.name) fields.reqs.push({ field: 'metadata.name', op: 'eq', value: route.name });
  const bookmarks = boolParam(q, 'allowWatchBookmarks');
  const sendInitial = boolParam(q, 'sendInitialEvents');
  const rvParam = q.get('resourceVersion') ?? '';
  const timeoutRaw = q.get('timeoutSeconds');
  const timeoutSeconds = timeoutRaw === null || timeoutRaw === '' ? undefined : Number(timeoutRaw);
  if (timeoutSeconds !== undefined && (!Number.isFinite(timeoutSeconds) || timeoutSeconds < 0)) throw badRequest(`invalid timeoutSeconds "${timeoutRaw}"`);
  if (rvParam !== '' && !/^\d+$/.test(rvParam)) throw badRequest(`invalid resourceVersion "${rvParam}": must be an integer`);
  // kube-apiserver's checks of a watch's options (k8s.io/apimachinery meta/internalversion/validation, validateWatchOptions).
  const match = q.get('resourceVersionMatch') ?? '';
  const sendInitialGiven = q.has('sendInitialEvents');
  const optionErrors: FieldError[] = [];
  if (sendInitialGiven && match !== 'NotOlderThan') optionErrors.push({ field: 'resourceVersionMatch', type: 'FieldValueForbidden', detail: 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
  if (match !== '') {
    if (!sendInitialGiven) optionErrors.push({ field: 'resourceVersionMatch', type: 'FieldValueForbidden', detail: 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided' });
    if (match !== 'NotOlderThan') optionErrors.push({ field: 'resourceVersionMatch', type: 'FieldValueNotSupported', value: match, detail: 'supported values: "NotOlderThan"' });
  }
  if (optionErrors.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', optionErrors);
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  // Send the headers now: clients (node-fetch) resolve the request on them, before any event.
  res.flushHeaders();
  if (drop) {
    req.socket.destroy();
    return;
  }
  const inScope = (o: KObject | undefined): boolean =>
    !!o && (!route.namespace || o.metadata?.namespace === route.namespace) && (labels.length === 0 || matchesLabels(labels, o.metadata?.labels)) && fields.matches(o);
  const write = (type: string, objJson: string): void => {
    res.write(`{"type":"${type}","object":${objJson}}\n`);
  };
  const deliver = (e: ChangeEvent): void => {
    // Like kube-apiserver with a watcher that cannot keep up: end its stream (it re-watches
    // from its last resourceVersion) rather than buffer without bound.
    if (res.writableLength > ctx.maxBufferBytes) {
      close();
      return;
    }
    const now = inScope(e.object);
    if (e.type === 'MODIFIED') {
      // Filtered watches see objects enter (ADDED) and leave (DELETED) their selection.
      const before = inScope(e.previous);
      if (now && before) write('MODIFIED', encode(e.object));
      else if (now) write('ADDED', encode(e.object));
      // Leaving the selection: the last state that matched, at the new resourceVersion (the watch
      // cache's conversion of such an event, k8s.io/apiserver storage/cacher).
      else if (before && e.previous) write('DELETED', encode({ ...e.previous, metadata: { ...e.previous.metadata, resourceVersion: e.object.metadata?.resourceVersion } }));
    } else if (now) write(e.type, encode(e.object));
  };
  const bookmark = (extra?: Record<string, string>): void => {
    const metadata: Record<string, unknown> = { resourceVersion: String(ctx.store.hub.deliveredRv(ctx.store.resourceVersion)) };
    if (extra) metadata.annotations = extra;
    // An empty object of the kind, as Go encodes one (a Node's spec and status structs included).
    const object: KObject = { kind: r.kind, apiVersion: apiVersionOf(r), metadata };
    r.encodeAsGo?.(object);
    write('BOOKMARK', JSON.stringify(object));
  };

  let closed = false;
  let unsubscribe = (): void => {};
  let bookmarkTimer: NodeJS.Timeout | undefined;
  let timeoutTimer: NodeJS.Timeout | undefined;
  const close = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(bookmarkTimer);
    clearTimeout(timeoutTimer);
    ctx.untrack(close);
    res.end();
  };
  ctx.track(close);
  res.on('close', close);

  const fromRv = rvParam === '' || rvParam === '0' ? undefined : Number(rvParam);
  if (fromRv !== undefined && fromRv > ctx.store.resourceVersion) {
    write('ERROR', JSON.stringify(new ApiError(504, 'Timeout', `Timeout: Too large resource version: ${fromRv}, current: ${ctx.store.resourceVersion}`).toStatus()));
    close();
    return;
  }
  const replay = fromRv === undefined ? [] : ctx.store.hub.since(r.id, fromRv);
  if (replay === undefined) {
    write('ERROR', JSON.stringify(expired(`too old resource version: ${fromRv} (${ctx.store.hub.compactedRv})`).toStatus()));
    close();
    return;
  }
  // Subscribing and replaying happen in one tick, so no event falls between them.
  unsubscribe = ctx.store.hub.subscribe({ resource: r.id, deliver });
  if ((fromRv === undefined && !(sendInitialGiven && !sendInitial)) || sendInitial) {
    // No resourceVersion (unless sendInitialEvents=false): the current state first, as synthetic ADDED events.
    for (const o of ctx.store.listRefs(r.id, { namespace: route.namespace || undefined })) if (inScope(o)) write('ADDED', encode(o));
    if (sendInitial && bookmarks) bookmark({ 'k8s.io/initial-events-end': 'true' });
  }
  for (const e of replay) deliver(e);
  if (bookmarks) {
    bookmarkTimer = setInterval(() => {
      if (!ctx.store.hub.isPaused) bookmark();
    }, ctx.bookmarkIntervalMs);
  }
  if (timeoutSeconds !== undefined) {
    timeoutTimer = setTimeout(() => {
      if (bookmarks && !ctx.store.hub.isPaused) bookmark();
      close();
    }, timeoutSeconds * 1000);
  }
}
