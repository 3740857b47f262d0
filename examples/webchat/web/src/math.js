// Math in answers: KaTeX (rehype-katex) renders what remark-math parsed
// ($…$ inline, $$…$$ on a line of its own) as MathML, which the browser
// lays out itself; KaTeX's HTML output would need its style sheet and
// fonts, and positions glyphs with inline styles. A chunk of its own
// (KaTeX is most of its size), fetched by Markdown.jsx after it: until it
// is in, a formula shows as its TeX source.
import katex from "katex";
import rehypeKatex from "rehype-katex";

const options = { output: "mathml", strict: "ignore" };
const mathClasses = ["language-math", "math-inline", "math-display"];

const textOf = (node) => (node.type === "text" ? node.value : (node.children ?? []).map(textOf).join(""));

// leaveBadMath runs before rehype-katex and takes the math classes off a
// formula KaTeX cannot parse (one still streaming in, or a mistake), so
// it shows as its source: rehype-katex would render it as an error with
// an inline style, which the page's Content-Security-Policy refuses.
function leaveBadMath() {
  const visit = (node) => {
    const classes = node.properties?.className;
    if (node.type === "element" && Array.isArray(classes) && classes.some((c) => mathClasses.includes(c))) {
      try {
        katex.renderToString(textOf(node), { ...options, displayMode: !classes.includes("math-inline"), throwOnError: true });
      } catch {
        node.properties.className = classes.filter((c) => !mathClasses.includes(c)).concat("math-source");
      }
      return;
    }
    for (const child of node.children ?? []) visit(child);
  };
  return visit;
}

export const rehypePlugins = [leaveBadMath, [rehypeKatex, options]];
