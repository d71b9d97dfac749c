// Kubernetes client runtime: clock, rate limiting, work queue, API client, watcher, events,
// and leader election.
export * from './clock.js';
export * from './ratelimit.js';
export * from './workqueue.js';
export * from './types.js';
export * from './discovery.js';
export * from './errors.js';
export * from './client.js';
export * from './emitter.js';
export * from './watcher.js';
export * from './time.js';
export * from './leader.js';
export * from './events.js';
