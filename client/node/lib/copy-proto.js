'use strict';
// npm pack/publish (prepack): copies the repository's proto into the
// package, where lib/client.js looks first, so a packed @mentat/client
// carries the contract it loads at run time.
const fs = require('node:fs');
const path = require('node:path');

const rel = path.join('mentat', 'v1', 'mentat.proto');
const from = path.join(__dirname, '..', '..', '..', 'proto', rel);
const to = path.join(__dirname, '..', 'proto', rel);
fs.mkdirSync(path.dirname(to), { recursive: true });
fs.copyFileSync(from, to);
