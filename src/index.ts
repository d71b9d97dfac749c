// Public API of node-address-ccm. Each module adds its exports here.
export * from './nodeip/index.js';
