// `--cloud-provider fake`: an empty in-memory cloud (useful with the simulated cluster, which
// programs it directly).
import type { ProviderFactory } from '../types.js';
import { FakeProvider } from './fake.js';

export const create: ProviderFactory = async () => new FakeProvider();
