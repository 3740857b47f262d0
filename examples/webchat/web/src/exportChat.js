// chatMarkdown writes a chat (GET /api/chats/{id}: {title, messages}) as
// Markdown: a heading per message, its text as written (it is Markdown
// already), each tool call as one line, reasoning left out.
export function chatMarkdown(chat) {
  const out = [`# ${chat.title || "Chat"}`, ""];
  for (const m of chat.messages ?? []) {
    out.push(m.role === "user" ? "## You" : "## Assistant", "");
    for (const p of m.parts ?? []) {
      if (p.type === "text" && p.text) out.push(p.text, "");
      else if (typeof p.type === "string" && (p.type.startsWith("tool-") || p.type === "dynamic-tool")) {
        const name = p.toolName ?? p.type.slice("tool-".length);
        const input = p.input !== undefined ? " " + JSON.stringify(p.input) : "";
        const result = p.state === "output-error" ? ` → failed: ${p.errorText ?? ""}`
          : p.state === "output-denied" ? " → denied"
          : p.output !== undefined ? ` → ${JSON.stringify(p.output)}` : "";
        out.push(`> tool \`${name}\`${input}${result}`, "");
      }
    }
  }
  return out.join("\n").trimEnd() + "\n";
}

// downloadText saves text as a file named name.
export function downloadText(name, text, type = "text/markdown") {
  const url = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// fileName makes a file name of a chat's title.
export const fileName = (title) =>
  (String(title || "chat").replace(/[^\p{L}\p{N}]+/gu, "-").replace(/^-+|-+$/g, "").slice(0, 60) || "chat") + ".md";
