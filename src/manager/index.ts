// The `run` process: options, wiring and adapters.
export { ControllerManager, COMPONENT, type ManagerDeps, type ManagerExit } from './manager.js';
export {
  resolveRunOptions, resolveControllers, parseGoDuration, parseGoBool, parseIntFlag, writeTimeoutMs, RunOptionsError, RUN_DEFAULTS,
  KNOWN_CONTROLLERS, DISABLED_BY_DEFAULT_CONTROLLERS, CIDR_ALLOCATOR_TYPES,
  type RunOptions, type RawRunFlags, type ControllerName, type NodeIPAMFlags, type LeaderElectionOptions as RunLeaderElectionOptions,
} from './options.js';
export { nodeCacheFromWatcher, nodeWriterFromClient, nodeDeleterFromClient } from './adapters.js';
export { createNodeEventSink, type NodeEvents } from './events.js';
