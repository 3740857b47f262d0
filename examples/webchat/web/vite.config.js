import { defineConfig } from "vite";

// No @vitejs/plugin-react: esbuild compiles the JSX (automatic runtime).
export default defineConfig({
  esbuild: { jsx: "automatic" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      // The libraries' "use client" directives and a comment in zod mean
      // nothing in this bundle.
      onwarn(warning, warn) {
        if (warning.code === "MODULE_LEVEL_DIRECTIVE" || warning.code === "INVALID_ANNOTATION") return;
        warn(warning);
      },
    },
  },
  server: { proxy: { "/api": "http://127.0.0.1:8080", "/agents": "http://127.0.0.1:8080" } },
});
