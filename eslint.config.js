// ESLint (typescript-eslint, type-checked recommended rules) over every TypeScript file tsc checks.
// Run with `npx eslint .`.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      '**/node_modules/**',
      // Generated: openapi-typescript's output, the SDK build, the built docs.
      'sdk/generated/**',
      'sdk/dist/**',
      'docs/public/**',
      'test-artifacts/**',
      '.data/**',
      '.test-data/**',
      // Only TypeScript is linted; this file and any other JavaScript are not part of the tsconfig.
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
      // TEMPORARY: bench harness being rewritten
      'scripts/bench/**',
    ],
  },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Keys left out by rest destructuring (`{ secret: _, ...rest }`) and the arguments a callback
      // must declare to be called right (Express knows an error handler by its four parameters).
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
    },
  },
);
