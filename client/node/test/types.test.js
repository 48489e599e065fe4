'use strict';
// index.d.ts is written by hand: test/types-check.ts uses the API as a
// TypeScript user would, and must compile with tsc --strict (typescript is
// a devDependency, pinned in package-lock.json).

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

test('index.d.ts typechecks a strict TypeScript user', () => {
  const tsc = require.resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022',
    '--module', 'commonjs', '--moduleResolution', 'node', '--types', 'node',
    path.join(__dirname, 'types-check.ts')], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
