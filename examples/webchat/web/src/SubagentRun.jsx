// SubagentRun shows one sub-agent's run: a "data-subagent" part from the
// server (aisdk.SubagentView), replaced as the sub-run goes on. It is a
// collapsible group titled with the agent's name and indented by its depth
// (a sub-agent's own sub-agents sit further in), holding the sub-agent's
// text and its tool calls as they happen. The group is open while the
// sub-agent works or waits, and folds once it is done, unless the user
// opened or folded it. A call of the sub-agent that needs approval comes as
// a tool part of its own (ToolFallback), approved like any other.
import { useState } from "react";
import { toolLabel } from "./ToolGroup.jsx";

const runText = { running: "working…", paused: "waiting for you", done: "done", failed: "failed" };

// callText is a sub-agent's call's state in words.
function callText(p) {
  switch (p.state) {
    case "output-available":
      return p.preliminary ? "running…" : "done";
    case "output-error":
      return "failed";
    case "output-denied":
      return "denied";
    case "approval-requested":
      return "waiting for your approval";
    case "approval-responded":
      return "approved";
    default:
      return "running…";
  }
}

const callClass = (p) =>
  p.state === "output-error" ? "error" : p.state === "output-denied" ? "denied" : p.state === "output-available" && !p.preliminary ? "done" : "running";

export function SubagentRun({ data }) {
  const [chosen, setChosen] = useState(null); // the user's open/folded, once they chose
  if (!data || !Array.isArray(data.parts)) return null;
  const live = data.state === "running" || data.state === "paused";
  const open = chosen ?? live;
  const depth = Math.min(Math.max(Number(data.depth) || 1, 1), 4);
  const agent = data.agent || "sub-agent";
  return (
    <details
      className={"subagent " + data.state}
      data-testid="subagent"
      data-agent={agent}
      data-state={data.state}
      data-depth={depth}
      style={{ "--depth": depth }}
      open={open}
      onToggle={(e) => {
        const now = e.currentTarget.open;
        setChosen(now === live ? null : now);
      }}
    >
      <summary>
        <span className="subagent-name">{agent}</span>
        <span className="subagent-status">{runText[data.state] ?? data.state}</span>
      </summary>
      <div className="subagent-body">
        {data.parts.length === 0 && <p className="muted">Starting…</p>}
        {data.parts.map((p, i) =>
          p.type === "tool" ? (
            <div key={i} className={"subagent-call " + callClass(p)} data-testid="subagent-call" data-tool={p.toolName}>
              <span className="tool-dot" aria-hidden="true" />
              <span className="subagent-call-label">{toolLabel(p.toolName, p.input)}</span>
              <span className="subagent-call-state">{callText(p)}</span>
            </div>
          ) : p.type === "reasoning" ? (
            <p key={i} className="subagent-reasoning">{p.text}</p>
          ) : (
            <p key={i} className="subagent-text">{p.text}</p>
          ),
        )}
      </div>
    </details>
  );
}

// SubrunState renders nothing: a "data-subrun" part is the paused
// sub-agent's signed state, which the page only posts back.
export const SubrunState = () => null;
