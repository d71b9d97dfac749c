// Side-effect import: makes --cloud-provider kind available.
import { registerProvider } from '../registry.js';
import { createKindProvider } from './index.js';

registerProvider('kind', (options) => createKindProvider(options));
