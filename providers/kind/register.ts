// `--cloud-provider kind`: the registry imports this module only when a process asks for kind.
import type { ProviderFactory } from '../types.js';
import { createKindProvider } from './index.js';

export const create: ProviderFactory = (options) => createKindProvider(options);
