// Public surface of the fake adapter.
export { FakeProvider } from './fake.js';
export type { FakeCall, FakeInstanceInput, FakeMethod } from './fake.js';
