// Tool UIs and the browser-side create_record tool.
import { useEffect, useState } from "react";
import { getExternalStoreMessages, makeAssistantTool, makeAssistantToolUI, useAuiState } from "@assistant-ui/react";
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
      <ToolCard state={result?.cancelled ? "denied" : "done"} testid="create-record-result" title={<b>create_record</b>}>
        <div className="tool-status">
          {result?.cancelled ? "Cancelled: you closed the form. " : "Submitted → "}
          <code>{pretty(result)}</code>
        </div>
      </ToolCard>
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
        <button type="submit" className="btn primary" disabled={streaming}>Create</button>
        <button type="button" className="btn" disabled={streaming}
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

// usePreliminary reports whether the call's output so far is preliminary
// (a tool-output-available chunk with preliminary: true, which a tool
// sends as interim progress). assistant-ui shows such output as the
// call's result, so this reads the flag from the AI SDK message behind
// the current message.
function usePreliminary(toolCallId) {
  return useAuiState((s) => {
    for (const m of getExternalStoreMessages(s.message)) {
      for (const p of m.parts ?? []) {
        if (p.toolCallId === toolCallId) return p.preliminary === true;
      }
    }
    return false;
  });
}

// assistant-ui gives a call that was left open (its reply was stopped)
// this error result when the next message is sent. It is not a failure
// of the tool: the call shows as not finished.
const cancelledOnSend = "User cancelled tool call by sending a new message.";

// unfinished matches the results the server stores for a call that never
// ran to its end (agentloop's "cancelled: <why>" of a stopped run, "not
// run: …", aisdk's "interrupted: …" of a server that died mid-run), which
// a reloaded chat shows: not finished, rather than failed.
const unfinished = /^(cancelled|not run|interrupted): /;

// callState is what a tool call's UI shows: "done" or "error" once it has
// a final result, "running" while it runs (or has only preliminary
// output), and "incomplete" when the run ended without a result (Stop, or
// an error, left it unfinished).
export const callState = (result, isError, status, preliminary) =>
  isError && (result?.error === cancelledOnSend || unfinished.test(result?.error)) ? "incomplete"
  : result !== undefined && !preliminary
    ? isError ? "error" : "done"
    : status?.type === "running" || preliminary ? "running" : "incomplete";

// errorText is the message of a failed call's result ({error: "…"} from
// the AI SDK adapter, or whatever the tool returned), without the
// "error: " the server puts before a tool's error for the model: the line
// already says the call failed.
const errorText = (result) =>
  (result && typeof result === "object" && typeof result.error === "string" ? result.error : pretty(result))
    .replace(/^\s*error:\s*/i, "");

// ToolCard is one tool call: a title line, then exactly one status line.
function ToolCard({ state, title, testid, children }) {
  return (
    <div className={"tool " + state} data-state={state} data-testid={testid}>
      <div className="tool-head">
        <span className="tool-dot" aria-hidden="true" />
        {title}
      </div>
      {children}
    </div>
  );
}

function BackendTool({ toolCallId, title, running, done, result, isError, status }) {
  const preliminary = usePreliminary(toolCallId);
  const state = callState(result, isError, status, preliminary);
  return (
    <ToolCard state={state} title={<b>{title}</b>}>
      <div className="tool-status">
        {state === "done" ? done
          : state === "error" ? <span className="err">Failed: {errorText(result)}</span>
          : state === "running" ? <span className="spinner">{running}</span>
          : <span className="muted">not finished</span>}
      </div>
      {preliminary && result !== undefined && (
        <div className="tool-partial" data-testid="tool-partial">so far: {pretty(result)}</div>
      )}
    </ToolCard>
  );
}

export const WeatherToolUI = makeAssistantToolUI({
  toolName: "get_weather",
  render: ({ toolCallId, args, result, isError, status }) => (
    <BackendTool toolCallId={toolCallId} title={`get_weather ${args?.city ?? ""}`} result={result} isError={isError} status={status}
      running="looking up the forecast…"
      done={result && typeof result === "object"
        ? `${result.city}: ${result.conditions}, ${result.low_c}–${result.high_c} °C`
        : pretty(result)} />
  ),
});

export const AddToolUI = makeAssistantToolUI({
  toolName: "add",
  render: ({ toolCallId, args, result, isError, status }) => (
    <BackendTool toolCallId={toolCallId} title={`add ${args?.a ?? "?"} + ${args?.b ?? "?"}`} result={result} isError={isError} status={status}
      running="adding…"
      done={result && typeof result === "object" && "sum" in result ? `= ${result.sum}` : pretty(result)} />
  ),
});

// ToolFallback renders every other tool call, including approval prompts
// for tools the server runs only after the user agrees (delete_record).
export function ToolFallback({ toolCallId, toolName, args, result, isError, approval, respondToApproval, status }) {
  const [busy, setBusy] = useState(false);
  const preliminary = usePreliminary(toolCallId);
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
  // A call without an approval that waits for the user: a sub-agent's run
  // that paused for its own call's approval (shown below it).
  const waitsOnSubagent = !approval && result === undefined && status?.type === "requires-action";
  const denied = approval?.approved === false;
  const state = denied ? "denied" : awaitingUser || waitsOnSubagent ? "running" : callState(result, isError, status, preliminary);
  let line;
  if (pending) {
    line = (
      <div className="approval" data-testid="approval" role="group" aria-label={`Allow ${toolName}?`}>
        <span>The assistant wants to run <b>{toolName}</b>. Allow it?</span>
        <span className="buttons">
          <button type="button" className="btn primary" disabled={busy} onClick={() => answer(true)}>Approve</button>
          <button type="button" className="btn" disabled={busy} onClick={() => answer(false)}>Deny</button>
        </span>
      </div>
    );
  } else if (denied) {
    line = <span className="muted approval-answer">Denied: you did not allow this call.</span>;
  } else if (state === "done") {
    line = <span>{approval?.approved ? "Approved → " : "→ "}<code>{pretty(result)}</code></span>;
  } else if (state === "error") {
    line = <span className="err">Failed: {errorText(result)}</span>;
  } else if (waitsOnSubagent) {
    line = <span className="muted">waiting for you</span>;
  } else if (state === "running") {
    line = <span className="spinner">{approval?.approved ? "approved, running…" : "running…"}</span>;
  } else {
    line = <span className="muted">not finished</span>;
  }
  return (
    <ToolCard state={state} testid={`tool-${toolName}`} title={<><b>{toolName}</b> <code className="tool-args">{pretty(args)}</code></>}>
      <div className="tool-status">{line}</div>
      {preliminary && result !== undefined && (
        <div className="tool-partial" data-testid="tool-partial">so far: {pretty(result)}</div>
      )}
    </ToolCard>
  );
}
