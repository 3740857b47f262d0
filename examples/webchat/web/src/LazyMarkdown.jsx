// LazyMarkdown loads the Markdown renderer (react-markdown, GFM, Prism)
// in its own chunk, after the first screen: the welcome screen needs none
// of it; it is fetched when the page is idle. Until it is in, a text part
// shows as plain text.
import { lazy, memo, Suspense } from "react";
import { MessagePartPrimitive } from "@assistant-ui/react";

const load = () => import("./Markdown.jsx");
const Markdown = lazy(() => load().then((m) => ({ default: m.MarkdownText })));

// Fetch the chunk once the first screen is up, so that it is usually in
// before the first answer.
if (typeof window !== "undefined") {
  const idle = window.requestIdleCallback ?? ((f) => setTimeout(f, 200));
  window.addEventListener("load", () => idle(() => load().catch(() => {})), { once: true });
}

const Plain = () => (
  <div className="md md-plain">
    <MessagePartPrimitive.Text />
  </div>
);

// MarkdownText renders the current text or reasoning part as Markdown.
export const MarkdownText = memo(function MarkdownText() {
  return (
    <Suspense fallback={<Plain />}>
      <Markdown />
    </Suspense>
  );
});
