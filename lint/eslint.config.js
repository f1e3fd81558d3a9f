// ESLint for the k6 scripts of scenarios/ (`make lint-js`): ES modules run by k6's JavaScript
// runtime, neither Node nor a browser, so the only globals are k6's own.
// CommonJS on purpose: eslint and @eslint/js live in $PROXYBENCH_CACHE/lint/node (lint/install.sh),
// outside the clone, and `require` finds them there through NODE_PATH (an import would not).
const js = require('@eslint/js');

module.exports = [
  {
    files: ['scenarios/**/*.js'],
    languageOptions: {
      ecmaVersion: 'latest',
      sourceType: 'module',
      globals: {
        // k6's init context and VU globals (https://grafana.com/docs/k6/latest/javascript-api/)
        __ENV: 'readonly',
        __VU: 'readonly',
        __ITER: 'readonly',
        open: 'readonly',
        require: 'readonly',
        console: 'readonly',
      },
    },
    rules: {
      ...js.configs.recommended.rules,
      eqeqeq: ['error', 'smart'],
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
];
