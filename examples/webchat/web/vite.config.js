import { defineConfig } from "vite";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

// precompress adds a .br and a .gz copy of every built JavaScript and CSS
// file of at least 1 KiB, made once at build time at the best level
// (Node's zlib, so the output is the same on every build). The Go server
// sends the one the browser accepts (page.go).
function precompress() {
  return {
    name: "precompress",
    apply: "build",
    enforce: "post",
    // After Vite's own generateBundle hooks, which still rewrite the
    // chunks' code (the preload list of dynamic imports).
    generateBundle: { order: "post", handler(_, bundle) {
      for (const file of Object.values(bundle)) {
        if (!/\.(js|css)$/.test(file.fileName)) continue;
        const source = Buffer.from(file.type === "chunk" ? file.code : file.source);
        if (source.length < 1024) continue;
        const br = brotliCompressSync(source, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: source.length,
          },
        });
        this.emitFile({ type: "asset", fileName: file.fileName + ".br", source: br });
        this.emitFile({ type: "asset", fileName: file.fileName + ".gz", source: gzipSync(source, { level: 9 }) });
      }
    } },
  };
}

// No @vitejs/plugin-react: esbuild compiles the JSX (automatic runtime).
export default defineConfig({
  esbuild: { jsx: "automatic" },
  plugins: [precompress()],
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
