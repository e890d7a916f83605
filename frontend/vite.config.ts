import path from 'node:path';
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const frontendRoot = path.dirname(fileURLToPath(import.meta.url));

/** API target of the dev server's proxy; the built app is served by the API itself (same origin). */
const apiTarget = process.env.VITE_API_TARGET ?? 'http://127.0.0.1:3000';

export default defineConfig(({ mode }) => ({
  root: frontendRoot,
  plugins: [react()],
  build: {
    outDir: path.join(frontendRoot, 'dist'),
    emptyOutDir: true,
    // production builds (the default mode of `vite build`) publish no source maps; `--mode development` has them
    sourcemap: mode !== 'production',
  },
  server: {
    proxy: { '/api': { target: apiTarget, changeOrigin: false } },
  },
}));
