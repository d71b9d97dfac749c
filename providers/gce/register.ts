// Side-effect import: makes --cloud-provider gce available.
import { registerProvider } from '../registry.js';
import { createGceProvider } from './index.js';

registerProvider('gce', (options) => createGceProvider(options));
