// Tool UIs and the browser-side create_record tool.
import { useEffect, useState } from "react";
import { makeAssistantTool, makeAssistantToolUI } from "@assistant-ui/react";
import { z } from "zod";

const pretty = (v) => (typeof v === "string" ? v : JSON.stringify(v));

// CreateRecordForm renders the model's create_record call as a form,
// prefilled with the model's arguments. Submitting returns the values the
// user entered as the tool's result; Cancel returns a cancellation.
function CreateRecordForm({ args, result, addResult, status }) {
  const [name, setName] = useState(args?.name ?? "");
  const [email, setEmail] = useState(args?.email ?? "");
  const [touched, setTouched] = useState(false);
  // While the arguments stream in, follow them until the user edits a field.
  useEffect(() => {
    if (touched) return;
    setName(args?.name ?? "");
    setEmail(args?.email ?? "");
  }, [args?.name, args?.email, touched]);

  if (result !== undefined) {
    return (
      <div className="tool tool-form done" data-testid="create-record-result">
        <b>create_record</b> → {pretty(result)}
      </div>
    );
  }
  const streaming = status?.type === "running";
  const submit = (e) => {
    e.preventDefault();
    addResult({ name, email });
  };
  return (
    <form className="tool tool-form" data-testid="create-record-form" onSubmit={submit}>
      <div className="tool-title">New record (the assistant filled this in; edit it and submit)</div>
      <label>
        Name
        <input name="name" value={name} disabled={streaming}
          onChange={(e) => { setTouched(true); setName(e.target.value); }} />
      </label>
      <label>
        Email
        <input name="email" value={email} disabled={streaming}
          onChange={(e) => { setTouched(true); setEmail(e.target.value); }} />
      </label>
      <div className="buttons">
        <button type="submit" disabled={streaming}>Create</button>
        <button type="button" disabled={streaming}
          onClick={() => addResult({ cancelled: true, message: "cancelled by the user" })}>
          Cancel
        </button>
      </div>
    </form>
  );
}

// CreateRecordTool registers create_record with the runtime. It has no
// execute: the form's addResult supplies the result, and its definition
// reaches the server only through the request's "tools".
export const CreateRecordTool = makeAssistantTool({
  toolName: "create_record",
  description: "Show the user a form to create a record (name and email), prefilled with these values; returns what the user submits.",
  parameters: z.object({
    name: z.string().describe("The person's name"),
    email: z.string().describe("The person's email address"),
  }),
  render: CreateRecordForm,
});

// callState is what a tool call's UI shows: "done" or "error" once it has
// a result, "running" while the run goes on, and "incomplete" when the run
// ended without a result (Stop, or an error, left it unfinished).
const callState = (result, isError, status) =>
  result !== undefined ? (isError ? "error" : "done") : status?.type === "running" ? "running" : "incomplete";

function BackendTool({ title, running, done, result, isError, status }) {
  const state = callState(result, isError, status);
  return (
    <div className={"tool " + state} data-state={state}>
      <b>{title}</b>{" "}
      {state === "done" ? done
        : state === "error" ? <span className="err">failed: {pretty(result)}</span>
        : state === "running" ? <span className="spinner">{running}</span>
        : <span className="err">not finished</span>}
    </div>
  );
}

export const WeatherToolUI = makeAssistantToolUI({
  toolName: "get_weather",
  render: ({ args, result, isError, status }) => (
    <BackendTool title={`get_weather ${args?.city ?? ""}`} result={result} isError={isError} status={status}
      running="looking up the forecast…"
      done={result && typeof result === "object"
        ? `${result.city}: ${result.conditions}, ${result.low_c}–${result.high_c} °C`
        : pretty(result)} />
  ),
});

export const AddToolUI = makeAssistantToolUI({
  toolName: "add",
  render: ({ args, result, isError, status }) => (
    <BackendTool title={`add ${args?.a ?? "?"} + ${args?.b ?? "?"}`} result={result} isError={isError} status={status}
      running="adding…"
      done={result && typeof result === "object" && "sum" in result ? `= ${result.sum}` : pretty(result)} />
  ),
});

// ToolFallback renders every other tool call, including approval prompts
// for tools the server runs only after the user agrees (delete_record).
export function ToolFallback({ toolName, args, result, isError, approval, respondToApproval, status }) {
  const [busy, setBusy] = useState(false);
  const pending = approval && approval.approved === undefined && !approval.resolution && result === undefined;
  const answer = async (approved) => {
    setBusy(true);
    try {
      await respondToApproval(approved ? { approved: true } : { approved: false, reason: "The user denied this call." });
    } finally {
      setBusy(false);
    }
  };
  // A call waiting for (or just given) the user's answer is still going.
  const awaitingUser = approval && result === undefined && status?.type === "requires-action";
  const state = awaitingUser ? "running" : callState(result, isError, status);
  return (
    <div className={"tool " + state} data-state={state} data-testid={`tool-${toolName}`}>
      <b>{toolName}</b> <code>{pretty(args)}</code>
      {pending && (
        <div className="approval" data-testid="approval">
          <span>The assistant wants to run <b>{toolName}</b>. Allow it?</span>
          <button disabled={busy} onClick={() => answer(true)}>Approve</button>
          <button disabled={busy} onClick={() => answer(false)}>Deny</button>
        </div>
      )}
      {approval && approval.approved !== undefined && (
        <div className="approval-answer">{approval.approved ? "approved" : "denied"}</div>
      )}
      {result !== undefined && <div className={isError ? "err" : ""}>→ {pretty(result)}</div>}
      {state === "running" && !awaitingUser && <span className="spinner">running…</span>}
      {state === "incomplete" && <span className="err">not finished</span>}
    </div>
  );
}
