import { defineConfig } from "vite";

// No @vitejs/plugin-react: esbuild compiles the JSX (automatic runtime).
export default defineConfig({
  esbuild: { jsx: "automatic" },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 2000 },
  server: { proxy: { "/api": "http://127.0.0.1:8080", "/agents": "http://127.0.0.1:8080" } },
});
