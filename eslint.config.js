// ESLint (typescript-eslint, type-checked recommended rules) over every TypeScript file tsc checks.
// Run by `npm test` and `npm run lint:ts`.
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
      // The console is a browser application with its own tsconfig (DOM, bundler resolution) and its
      // own dependencies: its strict tsc runs in `npm test` (npm run typecheck --prefix console).
      'console/**',
      'test-artifacts/**',
      '.data/**',
      '.test-data/**',
      // Only TypeScript is linted; this file and any other JavaScript are not part of the tsconfig.
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
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
  {
    // Tests read untyped values on purpose: rows of Knex queries, JSON they parse, answers of fake
    // peers. Answers of Dispatch are typed from openapi.yaml and validated against it at run time
    // by the test client (test/support/client.ts); chai's assertions read them as they are.
    files: ['test/**/*.ts'],
    rules: {
      // A test reads the fields of a row or a parsed body to assert on them.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      // A test keeps a row or a parsed body in a variable to assert on it.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      // A test hands a row or a parsed body to chai or to a helper.
      '@typescript-eslint/no-unsafe-argument': 'off',
      // A test calls array methods on rows of a query (`rows.map(...)`).
      '@typescript-eslint/no-unsafe-call': 'off',
      // A test's helpers answer rows and parsed bodies.
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
