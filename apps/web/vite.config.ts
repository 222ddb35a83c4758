import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// The gateway serves `dist` at `/` (README "Web app"); the API stays under `/api/v1` on the same
// origin, so the app needs no CORS. `npm run dev -w apps/web` proxies the API to a local gateway.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: true },
  server: { proxy: { '/api': process.env.QUILL_GATEWAY_URL ?? 'http://127.0.0.1:8080' } },
});
