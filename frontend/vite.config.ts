import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';

const frontendRoot = path.dirname(fileURLToPath(import.meta.url));

/** API target of the dev server's proxy; the built app is served by the API itself (same origin). */
const apiTarget = process.env.VITE_API_TARGET ?? 'http://127.0.0.1:3000';

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|webmanifest)$/i;
/** Smaller files gain nothing worth it. */
const MIN_COMPRESS_BYTES = 256;

/**
 * Writes `<file>.br` (quality 11) and `<file>.gz` (level 9) beside every text file of the build, so the API
 * serves them precompressed by the browser's Accept-Encoding (koa-send in api/middleware/staticFrontend.ts)
 * at no CPU cost per request. Media (MP4, images) are compressed already and are left as they are.
 */
function precompress(): Plugin {
  let outDir = '';
  return {
    name: 'render-studio-precompress',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    async writeBundle(_options, bundle) {
      const files = Object.keys(bundle).filter((name) => COMPRESSIBLE.test(name));
      await Promise.all(
        files.map(async (name) => {
          const file = path.join(outDir, name);
          const data = await fs.readFile(file);
          if (data.length < MIN_COMPRESS_BYTES) return;
          const [br, gz] = await Promise.all([
            brotli(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length } }),
            gzip(data, { level: 9 }),
          ]);
          await Promise.all([fs.writeFile(`${file}.br`, br), fs.writeFile(`${file}.gz`, gz)]);
        }),
      );
    },
  };
}

export default defineConfig(({ mode }) => ({
  root: frontendRoot,
  plugins: [react(), precompress()],
  build: {
    outDir: path.join(frontendRoot, 'dist'),
    emptyOutDir: true,
    // production builds (the default mode of `vite build`) publish no source maps; `--mode development` has them
    sourcemap: mode !== 'production',
    // dist/.vite/manifest.json maps each source module to its chunk (tests check what the landing page loads);
    // the API never serves dot-folders
    manifest: true,
    // two pages: the app, and a review link's guest page (/r/<token>, api/routes/guestReview.ts) with none of the app's code
    rollupOptions: { input: { main: path.join(frontendRoot, 'index.html'), review: path.join(frontendRoot, 'review.html') } },
  },
  server: {
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
}));
