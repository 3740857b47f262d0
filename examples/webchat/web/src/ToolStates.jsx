import { useCallback, useEffect, useState } from "react";

// ToolStatesPanel shows GET /agents/{chatId}/tool-states and resets them.
// version changes after each run, which reloads the panel.
export function ToolStatesPanel({ chatId, version }) {
  const [states, setStates] = useState(null);
  const [error, setError] = useState("");

  const load = useCallback(async () => {
    if (!chatId) return;
    try {
      const res = await fetch(`/agents/${encodeURIComponent(chatId)}/tool-states`);
      const body = await res.json().catch(() => null);
      if (!res.ok || !body?.success) {
        setError(body?.error ?? `HTTP ${res.status}`);
        setStates(null);
        return;
      }
      setError("");
      setStates(body.data?.toolStates ?? {});
    } catch (e) {
      setError(String(e));
    }
  }, [chatId]);

  useEffect(() => {
    load();
  }, [load, version]);

  const reset = async () => {
    const res = await fetch(`/agents/${encodeURIComponent(chatId)}/tool-states/reset`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    if (!res.ok) setError(`reset failed: HTTP ${res.status}`);
    await load();
  };

  const names = states ? Object.keys(states).sort() : [];
  return (
    <aside className="panel" data-testid="tool-states">
      <h2>Tool states</h2>
      {!chatId && <p className="hint">Send a message to start a conversation.</p>}
      {chatId && error && <p className="hint">Not available: {error}</p>}
      {states && names.length === 0 && <p className="hint">No tools seen yet.</p>}
      {names.length > 0 && (
        <table>
          <tbody>
            {names.map((n) => (
              <tr key={n} className={"st-" + states[n].status} data-tool={n} data-status={states[n].status}>
                <td>{n}</td>
                <td>{states[n].status}</td>
                <td className="reason">{states[n].reason ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {chatId && (
        <div className="buttons">
          <button onClick={load}>Refresh</button>
          <button onClick={reset} disabled={!states}>Reset</button>
        </div>
      )}
    </aside>
  );
}
