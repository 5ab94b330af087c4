import { defineConfig } from 'vite';

/**
 * The console is built to static files the api serves at / (api/http/console.ts): no dev server in production, no
 * second process. Pages are split into their own chunks (pages/registry.ts), so the first load carries the shell only.
 */
export default defineConfig({
  base: '/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    reportCompressedSize: false,
    // The builder's editor (CodeMirror) is one chunk of ~630 KB, loaded only on a builder session's page; the first
    // load's budget is measured by the browser test, so Vite's per-chunk warning would only be noise.
    chunkSizeWarningLimit: 1024,
    rolldownOptions: {
      // React Query marks its files "use client" for server-component frameworks; a client-only bundle needs nothing.
      onLog(level, log, handler) {
        if (log.code === 'MODULE_LEVEL_DIRECTIVE') return;
        handler(level, log);
      },
    },
  },
  // `npm run dev:web`: the console with hot reload against an api on :3000 (npm start), same origin through the proxy.
  server: {
    proxy: Object.fromEntries(
      ['/platform', '/compat', '/openapi.json'].map((p) => [
        p,
        { target: 'http://127.0.0.1:3000', changeOrigin: false },
      ]),
    ),
  },
});
