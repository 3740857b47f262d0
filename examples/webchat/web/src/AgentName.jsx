// AgentName names the agent that answers in a run with handoffs: the
// server sends it as the message's metadata {"agent": name} (aisdk), which
// the AI SDK adapter keeps under metadata.custom. Runs without handoffs
// send none, and nothing is shown.
import { useAuiState } from "@assistant-ui/react";

export function AgentName() {
  const agent = useAuiState((s) => s.message.metadata?.custom?.agent);
  if (typeof agent !== "string" || agent === "") return null;
  return (
    <div className="agent-name" data-testid="agent-name">
      <span className="muted">Agent · </span>
      <b>{agent}</b>
    </div>
  );
}
