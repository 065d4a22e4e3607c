// Linter: ESLint's Linter class lints fixed code against the recommended
// rules plus style rules; prints every message, the fixed output and a
// summary; exits 1 when there are errors, as the eslint command does.
'use strict';
const fs = require('fs');
const path = require('path');
const { Linter } = require('eslint');
const js = require('@eslint/js');

const dir = path.join(__dirname, 'inputs');
const linter = new Linter({ configType: 'flat' });
const config = [
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: 2024, sourceType: 'module', globals: { console: 'readonly', require: 'readonly', module: 'writable', process: 'readonly' } },
    rules: {
      semi: ['error', 'always'], quotes: ['warn', 'single'], eqeqeq: 'error', 'no-var': 'error', 'prefer-const': 'warn',
      curly: 'warn', 'no-else-return': 'warn', 'arrow-body-style': ['warn', 'as-needed'], 'object-shorthand': 'warn',
      'no-unused-vars': ['error', { args: 'all' }], 'max-len': ['warn', { code: 100 }], 'prefer-template': 'warn',
      complexity: ['warn', 3], 'no-shadow': 'error', 'require-await': 'warn', 'no-return-await': 'off',
    },
  },
];
let errors = 0;
let warnings = 0;
for (const file of ['lint-me.js', 'messy.js']) {
  const code = fs.readFileSync(path.join(dir, file), 'utf8');
  const cfg = file === 'messy.js' ? [...config, { languageOptions: { sourceType: 'commonjs' } }] : config;
  const messages = linter.verify(code, cfg, { filename: file });
  process.stdout.write(`==== ${file}: ${messages.length} messages\n`);
  for (const m of messages) {
    if (m.severity === 2) errors++; else warnings++;
    process.stdout.write(`${file}:${m.line}:${m.column} ${m.severity === 2 ? 'error' : 'warning'} ${m.message} (${m.ruleId})${m.fix ? ' [fixable]' : ''}\n`);
  }
  const fixed = linter.verifyAndFix(code, cfg, { filename: file });
  process.stdout.write(`---- fixed (${fixed.fixed}), ${fixed.messages.length} left\n${fixed.output}\n`);
}
process.stderr.write(`${errors + warnings} problems (${errors} errors, ${warnings} warnings)\n`);
process.exitCode = errors ? 1 : 0;
