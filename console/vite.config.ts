import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by Dispatch under /console/ (app/console.ts); `npm run dev` proxies the API to a local Dispatch.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1200 },
  server: { proxy: { '/api': process.env.DISPATCH_URL ?? 'http://127.0.0.1:3000' } },
});
