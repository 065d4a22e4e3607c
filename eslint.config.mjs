import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'test/corpus/**', 'demo/**', 'bench/targets/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // in-target code loads modules lazily on purpose (start-up cost, load-hook re-entry)
    files: ['src/agent/**'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
