import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // build/: generated output (scripts/build-image-root.mjs writes the image root there).
  { ignores: ['dist/', 'build/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { console: 'readonly', process: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  // The pure logic that runs for every node of every round: no `{ ...obj, newKey }`. Once optimised,
  // Node 20's V8 gives each such object a hidden class of its own, in old space (docs/benchmarks.md,
  // "Object spread on Node 20"). Overwriting keys the spread object has, or spreading last, is fine.
  {
    files: ['src/nodeip/**/*.ts', 'src/model/**/*.ts', 'src/ipam/**/*.ts', 'src/controllers/cloudnode/decide.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        selector: 'ObjectExpression > SpreadElement:first-child ~ Property',
        message: 'Spread first, then more keys: on Node 20 each such object gets a hidden class of its own once optimised (docs/benchmarks.md, "Object spread on Node 20"). Name the keys, use Object.assign, or spread last.',
      }],
    },
  },
);
