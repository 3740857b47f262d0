// The page's assistant-ui runtime: the AI SDK chat (useChatRuntime) on the
// server's POST /api/chat. Everything about where chats come from lives
// here, so the thread list (a remote thread list adapter over /api/chats)
// and resuming a live run (resume: true) are added in this one place.
import { useMemo } from "react";
import { AssistantChatTransport, useChatRuntime } from "@assistant-ui/react-ai-sdk";
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";

// continueRun re-sends after the browser answered every tool call (the
// form) or every approval, so the server continues the run.
const continueRun = (opts) =>
  lastAssistantMessageIsCompleteWithToolCalls(opts) ||
  lastAssistantMessageIsCompleteWithApprovalResponses(opts);

// useWebchatRuntime returns the runtime for AssistantRuntimeProvider.
// onChatId gets the chat id of each request (the tool-state panel needs
// it); onResponseEnd is called once each response has been read to its
// end (or failed), so views of server state can refresh. Both must be
// stable (useCallback).
export function useWebchatRuntime({ onChatId, onResponseEnd }) {
  const transport = useMemo(
    () =>
      new AssistantChatTransport({
        api: "/api/chat",
        fetch: async (input, init) => {
          try {
            const id = JSON.parse(init?.body ?? "{}").id;
            if (id) onChatId(id);
          } catch {
            // not JSON: nothing to note
          }
          const res = await fetch(input, init);
          if (res.body) {
            res.clone().text().then(onResponseEnd, onResponseEnd);
          } else {
            onResponseEnd();
          }
          return res;
        },
      }),
    [onChatId, onResponseEnd],
  );
  return useChatRuntime({ transport, sendAutomaticallyWhen: continueRun });
}
