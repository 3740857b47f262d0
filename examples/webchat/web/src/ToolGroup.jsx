// ToolGroup folds a run of tool calls (the calls of a step, or of steps
// with no text between them) into one row: a human label for each call
// and one status for the group. The row opens to the calls' cards; it is
// open, and cannot be folded, while a call waits for the user (a form to
// fill in, an approval to give), so those stay in view.
import { useState } from "react";
import { useAuiState } from "@assistant-ui/react";
import { callState } from "./tools.jsx";

// words turns a tool's name into words: get_weather → "get weather".
const words = (name) => String(name ?? "tool").replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_\-.]+/g, " ").trim().toLowerCase();

// labels names the calls people know by what they do; any other tool by
// its name in words.
const labels = {
  get_weather: (a) => `Weather${a?.city ? " in " + a.city : ""}`,
  add: (a) => `Add ${a?.a ?? "?"} + ${a?.b ?? "?"}`,
  create_record: () => "Record form",
  delete_record: (a) => `Delete record${a?.id !== undefined ? " " + a.id : ""}`,
};

export const toolLabel = (name, args) => {
  const label = labels[name]?.(args);
  if (label) return label;
  const w = words(name);
  return w.charAt(0).toUpperCase() + w.slice(1);
};

// callSummary is one call as the group's row needs it.
function callSummary(p) {
  const waits = p.result === undefined && p.status?.type === "requires-action";
  const denied = p.approval?.approved === false;
  const state = waits ? "waiting" : denied ? "denied" : callState(p.result, p.isError, p.status, false);
  return { label: toolLabel(p.toolName, p.args), state };
}

// groupStatus is the group's one status, the most urgent first.
function groupStatus(calls) {
  const n = (s) => calls.filter((c) => c.state === s).length;
  if (n("waiting")) return { state: "waiting", text: "waiting for you" };
  if (n("running")) return { state: "running", text: "running…" };
  if (n("error")) return { state: "error", text: n("error") === calls.length ? "failed" : `${n("error")} of ${calls.length} failed` };
  if (n("incomplete")) return { state: "incomplete", text: "not finished" };
  if (n("denied")) return { state: "denied", text: n("denied") === calls.length ? "denied" : "done, one denied" };
  return { state: "done", text: "done" };
}

export function ToolGroup({ startIndex, endIndex, children }) {
  // A string, so the row renders again only when what it shows changes.
  const json = useAuiState((s) =>
    JSON.stringify(s.message.parts.slice(startIndex, endIndex + 1).filter((p) => p.type === "tool-call").map(callSummary)),
  );
  const calls = JSON.parse(json);
  const [open, setOpen] = useState(false);
  const status = groupStatus(calls);
  const forced = status.state === "waiting";
  // Repeated calls count once: "Weather ×3".
  const counted = [];
  for (const c of calls) {
    const last = counted.at(-1);
    if (last && last.label === c.label) last.n++;
    else counted.push({ label: c.label, n: 1 });
  }
  const label = counted.map((c) => (c.n > 1 ? `${c.label} ×${c.n}` : c.label)).join(", ");
  return (
    <details className={"tool-group " + status.state} data-testid="tool-group" data-state={status.state} open={open || forced}
      onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary onClick={(e) => forced && e.preventDefault()}>
        <span className="tool-dot" aria-hidden="true" />
        <span className="tool-group-label">{label}</span>
        <span className="tool-group-status">{status.text}</span>
      </summary>
      <div className="tool-group-calls">{children}</div>
    </details>
  );
}
