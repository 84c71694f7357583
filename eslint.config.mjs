import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/src/generated/**', '**/src/gen/**', '**/node_modules/**', '**/*.js', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    rules: {
      // Services talk through gRPC and Kafka, packages never reach into services or into another package's src.
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@conveyor/*/src/*', '**/services/*'], message: 'Import packages by name; services never import each other.' }] },
      ],
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
