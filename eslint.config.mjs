// typescript-eslint's type-checked recommended rules (with ESLint's recommended ones) over server/, client/, scripts/,
// test/ and app/ (with React's rules of hooks there): `npm run lint:ts`. Every rule is on everywhere; findings are fixed, never hidden by inline
// eslint-disable comments.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettierConfig from 'eslint-config-prettier';
import reactHooks from 'eslint-plugin-react-hooks';

export default tseslint.config(
  { ignores: ['dist/**', 'generated/**', 'node_modules/**', 'coverage/**'] },
  {
    files: ['server/**/*.ts', 'client/**/*.ts', 'scripts/**/*.ts', 'test/**/*.ts', 'app/**/*.{ts,tsx}'],
    // Layout is Prettier's (`npm run format`); eslint-config-prettier turns off the rules that would disagree with it.
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked, prettierConfig],
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
    files: ['app/**/*.{ts,tsx}'],
    extends: [reactHooks.configs.flat.recommended],
  },
  {
    // This rule says which components React Compiler would leave as written; the console is not built with the
    // compiler (Vite compiles its TSX alone), and the virtual table needs @tanstack/react-virtual's hook.
    files: ['app/src/components/VirtualTable.tsx'],
    rules: { 'react-hooks/incompatible-library': 'off' },
  },
  {
    // Control characters are what these files look for (the NUL character in text, any of them in the CLI's names).
    files: ['server/http/text-safety.ts', 'server/cli/args.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // Plain Node scripts that run before anything is built (scripts/build.mjs).
    files: ['scripts/**/*.mjs'],
    extends: [js.configs.recommended, prettierConfig],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
);
