// typescript-eslint's type-checked recommended rules (with ESLint's recommended ones) over server/, client/, scripts/
// and test/: `npm run lint:ts`. A rule turned off below says how many findings it still has: they are to be fixed,
// and the rule turned back on (never hidden by inline eslint-disable comments).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'generated/**', 'node_modules/**', 'coverage/**'] },
  {
    files: ['server/**/*.ts', 'client/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A leading underscore names what is left out on purpose (a rest sibling's dropped key, an ignored loop row).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // An AbortSignal's reason (typed any) is passed on as it is, as fetch does.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true }],
    },
  },
  {
    // OFF in test/api and test/contract only, to be fixed: values typed `any` used without a type. server/, client/,
    // scripts/, test/helpers and test/unit have none. Findings left (384): test/contract 171 (the spec read as
    // `Json = Record<string, any>` in openapi.ts), jobs 96, warmup 45, placement 35, contact-counts 7, list 5,
    // analytics 5, idempotency 2 (raw bodies and rows not yet read through test/helpers/bodies.ts and row types),
    // and 18 in other files, all jest asymmetric matchers (`expect.any()`...), which @types/jest types `any`:
    files: ['test/api/**/*.ts', 'test/contract/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off', // 199
      '@typescript-eslint/no-unsafe-assignment': 'off', // 88
      '@typescript-eslint/no-unsafe-argument': 'off', // 57
      '@typescript-eslint/no-unsafe-return': 'off', // 15
      '@typescript-eslint/no-unsafe-call': 'off', // 25
    },
  },
  {
    // OFF in this file only, to be fixed with the no-unsafe-* rules above, which type what it walks: the spec read as
    // `Json = Record<string, any>` (openapi-typescript's OpenAPI3 types fit it, as in scripts/generate.ts). Findings: 1.
    files: ['test/contract/openapi.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The NUL character is what this file looks for.
    files: ['server/http/text-safety.ts'],
    rules: { 'no-control-regex': 'off' },
  },
);
