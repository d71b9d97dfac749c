// The IP-range audit: pure findings, object conversion, and collection from a live cluster.
export * from './findings.js';
export * from './objects.js';
export * from './collect.js';
