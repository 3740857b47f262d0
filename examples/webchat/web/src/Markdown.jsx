// Markdown for answers and reasoning: assistant-ui's MarkdownTextPrimitive
// (react-markdown underneath) with GitHub-flavoured Markdown, math
// (KaTeX, as MathML), Prism highlighting for a few languages, and links
// that open safely.
import { memo, useEffect, useRef, useState } from "react";
import { MarkdownTextPrimitive } from "@assistant-ui/react-markdown";
import { makePrismLightSyntaxHighlighter } from "@assistant-ui/react-syntax-highlighter";
import { PrismLight } from "react-syntax-highlighter";
import bash from "react-syntax-highlighter/dist/esm/languages/prism/bash.js";
import go from "react-syntax-highlighter/dist/esm/languages/prism/go.js";
import javascript from "react-syntax-highlighter/dist/esm/languages/prism/javascript.js";
import json from "react-syntax-highlighter/dist/esm/languages/prism/json.js";
import python from "react-syntax-highlighter/dist/esm/languages/prism/python.js";
import typescript from "react-syntax-highlighter/dist/esm/languages/prism/typescript.js";
import yaml from "react-syntax-highlighter/dist/esm/languages/prism/yaml.js";
import remarkGfm from "remark-gfm";
import remarkMath from "remark-math";
import { CheckIcon, CopyIcon } from "./icons.jsx";

// Only these grammars are bundled; a block in another language shows as
// plain monospaced text.
for (const [name, grammar] of Object.entries({ bash, go, javascript, json, python, typescript, yaml })) {
  PrismLight.registerLanguage(name, grammar);
}
for (const [alias, name] of Object.entries({ sh: "bash", shell: "bash", js: "javascript", ts: "typescript", py: "python", yml: "yaml", golang: "go" })) {
  PrismLight.alias(name, alias);
}

// Token classes, not inline styles: style.css colours them for light and
// dark mode.
const SyntaxHighlighter = makePrismLightSyntaxHighlighter({ useInlineStyles: false });

// safeUrl keeps web, mail and in-page links and drops every other scheme
// (javascript:, data:, vbscript:, …): the link then renders as plain text.
export function safeUrl(url) {
  const u = String(url ?? "").trim();
  if (/^(https?:|mailto:)/i.test(u) || u.startsWith("#")) return u;
  if (/^\/(?!\/)/.test(u)) return u; // same-site path, not //host
  return "";
}

// A link from the model opens in a new tab, without giving that tab a
// handle on this page or the page's address; an in-page link (a footnote
// and its way back) stays on the page.
function Link({ node, href, children, ...rest }) {
  if (!href) return <span className="link-dropped">{children}</span>;
  if (href.startsWith("#")) return <a {...rest} href={href}>{children}</a>;
  return (
    <a {...rest} href={href} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  );
}

function CodeHeader({ language, code }) {
  const [copied, setCopied] = useState(false);
  const copy = () => {
    if (!code || !navigator.clipboard) return;
    navigator.clipboard.writeText(code).then(() => {
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    }, () => {});
  };
  return (
    <div className="code-header">
      <span className="code-lang">{language || "text"}</span>
      <button type="button" className="icon-btn" onClick={copy} aria-label={copied ? "Copied" : "Copy code"} title="Copy code">
        {copied ? <CheckIcon /> : <CopyIcon />}
      </button>
    </div>
  );
}

// A code block or a table scrolls sideways inside its own box on a
// narrow screen; it takes the focus, so a keyboard can scroll it too.
// A table wider than its box says so under it ("scroll sideways").
const Pre = ({ node, ...rest }) => <pre {...rest} tabIndex={0} />;
function Table({ node, ...rest }) {
  const ref = useRef(null);
  const [wide, setWide] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === "undefined") return undefined;
    const measure = () => setWide(el.scrollWidth > el.clientWidth + 1);
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    if (el.firstElementChild) ro.observe(el.firstElementChild);
    measure();
    return () => ro.disconnect();
  }, []);
  return (
    <>
      <div ref={ref} className={"table-scroll" + (wide ? " wide" : "")} tabIndex={0} role="group" aria-label={wide ? "Table, scrolls sideways" : "Table"}>
        <table {...rest} />
      </div>
      {wide && <p className="table-hint" aria-hidden="true">Scroll sideways for more →</p>}
    </>
  );
}

// A task list's checkbox is read only, and says what it marks (axe asks
// every form field for a name).
const Input = ({ node, ...rest }) =>
  rest.type === "checkbox" ? <input {...rest} aria-label={rest.checked ? "Done" : "Not done"} /> : <input {...rest} />;

const components = { a: Link, pre: Pre, table: Table, input: Input, SyntaxHighlighter, CodeHeader };
const remarkPlugins = [remarkGfm, remarkMath];

// Math ($…$, $$…$$) is rendered by math.js, a chunk of its own fetched
// right after this one; until it is in, formulas show as their source.
const noPlugins = [];
let mathPlugins = null;
const mathLoaded = import("./math.js").then((m) => {
  mathPlugins = m.rehypePlugins;
}, () => {});

function useMathPlugins() {
  const [plugins, setPlugins] = useState(mathPlugins);
  useEffect(() => {
    if (plugins) return undefined;
    let live = true;
    mathLoaded.then(() => live && setPlugins(mathPlugins));
    return () => {
      live = false;
    };
  }, [plugins]);
  return plugins ?? noPlugins;
}

// MarkdownText renders the current text or reasoning part as Markdown.
export const MarkdownText = memo(function MarkdownText() {
  const rehypePlugins = useMathPlugins();
  return (
    <MarkdownTextPrimitive
      className="md"
      remarkPlugins={remarkPlugins}
      rehypePlugins={rehypePlugins}
      components={components}
      urlTransform={safeUrl}
    />
  );
});
