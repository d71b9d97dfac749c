// Registers `--cloud-provider fake`: an empty in-memory cloud (useful with the simulated cluster,
// which programs it directly). Importing this module has that side effect.
import { registerProvider } from '../registry.js';
import { FakeCloudProvider } from './fake.js';

export { FakeCloudProvider } from './fake.js';
export type { FakeCall, FakeInstanceInput, FakeMethod } from './fake.js';

registerProvider('fake', async () => new FakeCloudProvider());
