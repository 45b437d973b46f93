// ESLint for the whole tree (`npm run lint`, run by `npm test` before the suite).
// Formatting is prettier's (`npm run format`); this checks what a formatter cannot:
// import cycles, function and file length, the long string literals prettier leaves on one
// line (shipped code), and typescript-eslint's recommended rules.
import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'proto/gen/', 'bench/results/', 'build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // The cycle check reads each imported file: with TypeScript's parser, or it sees no imports in .ts files.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
    },
    rules: {
      // A cycle between files. import-x skips type-only imports (no option counts them), so
      // test/repo/layout.test.ts checks the shipped code's file cycles again with type-only
      // imports included (a type cycle is a layering cycle too), and folder cycles.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      // `_name`: a value a destructuring or a signature needs but the code does not read.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      'max-lines': ['error', { max: 300, skipBlankLines: true, skipComments: true }],
      // Prettier wraps code at 120 but never splits a string: long messages are concatenated.
      'max-len': ['error', { code: 160, ignoreUrls: true }],
    },
  },
  {
    // Tests and benchmarks are tables of cases and scripted steps: long by nature.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'max-lines-per-function': 'off', 'max-lines': 'off', 'max-len': 'off' },
  },
  {
    files: ['scripts/**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
