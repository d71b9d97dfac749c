// Public surface of the fake adapter.
export { FakeCloudProvider } from './fake.js';
export type { FakeCall, FakeInstanceInput, FakeMethod } from './fake.js';
