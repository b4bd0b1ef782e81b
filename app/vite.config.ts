/**
 * The web console's build (`npm run build` writes dist/app, served by the API at /app) and its dev server
 * (`npm run app:dev`: hot reload on http://localhost:5173/app/, the API calls proxied to API_URL, default
 * http://localhost:3000, so the page and the API share an origin as they do when served).
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const api = process.env.API_URL ?? 'http://localhost:3000';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  // Files under 4 KB would become data: URLs; the page's CSP allows them for images only, so nothing is inlined.
  build: { outDir: '../dist/app', emptyOutDir: true, assetsInlineLimit: 0, reportCompressedSize: false },
  server: { proxy: { '/v1': api, '/v2': api } },
});
