'use strict';
/** The built front end, rebuilt when its sources changed since the last build (npm start, npm run start:scaled). */
const fs = require('node:fs');
const path = require('node:path');
const tools = require('./tools');

function newestMtime(dir) {
  let newest = 0;
  if (!fs.existsSync(dir)) return newest;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : fs.statSync(p).mtimeMs);
  }
  return newest;
}

function buildFrontendIfStale() {
  const ROOT = tools.ROOT;
  const index = path.join(ROOT, 'frontend', 'dist', 'index.html');
  const sources = Math.max(newestMtime(path.join(ROOT, 'frontend', 'src')), newestMtime(path.join(ROOT, 'domain')));
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= sources) return;
  tools.log('building the front end');
  tools.run(path.join(ROOT, 'node_modules', '.bin', 'vite'), ['build', '--config', 'frontend/vite.config.ts', '--logLevel', 'warn']);
}

module.exports = { buildFrontendIfStale };
