// Importing this module registers every built-in adapter with the provider registry.
import './static/index.js';
import './fake/index.js';
import './aws/index.js';
import './gce/register.js';
import './kind/register.js';

export { createProvider, knownProviders, registerProvider } from './registry.js';
