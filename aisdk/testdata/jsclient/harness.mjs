// harness.mjs drives the real AI SDK client against a chat server: the Chat
// class of @ai-sdk/react (what useChat holds; no React rendering needed)
// with DefaultChatTransport from "ai", or, for the assistant-ui scenario,
// assistant-ui's own AssistantChatTransport (@assistant-ui/react-ai-sdk)
// wired to a stub runtime whose model context holds the page's tools.
//
//   node harness.mjs <scenario> <url>
//
// It prints one JSON object on stdout:
//   {scenario, status, error, messages, requests, chunks, invalidChunks, toolCalls, views}
// (and, for the resume scenarios, firstMessages, what the page showed when
// it went away, and reloaded, the stored chat it loaded)
// where requests are the posted bodies, chunks the data of every SSE event
// the client received, invalidChunks the events that failed the client's
// own chunk schema (uiMessageChunkSchema, checked with the same
// safeParseJSON the transport uses), and views every distinct state of the
// tool parts that the chat showed while it ran (what a UI renders from
// useChat's messages), in order. The Go test aisdk/jsclient_test.go
// asserts on it. Exit status 0 means the harness itself worked, whatever the
// chat's status; 2 means bad usage or a harness failure.
import { Chat } from '@ai-sdk/react';
import { AssistantChatTransport } from '@assistant-ui/react-ai-sdk';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  uiMessageChunkSchema,
} from 'ai';
import { safeParseJSON } from '@ai-sdk/provider-utils';

// Scenarios: what the user says, which client tools the page knows, how it
// answers approvals, and whether it posts assistant-ui's body shape.
const scenarios = {
  text: { say: 'Hello' },
  // A second message after a server tool's answer: the client posts the
  // server's signed parts back.
  'server-tool-followup': { say: ['Weather in Oslo?', 'Thanks!'] },
  // A server tool that reports progress: preliminary output, then the final.
  progress: { say: 'Import the rows' },
  reasoning: { say: 'Think first' },
  'server-tool': { say: 'Weather in Oslo?' },
  'client-tool': {
    say: 'Where am I?',
    clientTools: { getLocation: input => ({ city: 'Berlin', precision: input.precision }) },
  },
  'assistant-ui': {
    say: 'Where am I?',
    assistantUI: true,
    clientTools: { getLocation: input => ({ city: 'Berlin', precision: input.precision }) },
  },
  'approval-approved': { say: 'Delete record 7', approve: { approved: true } },
  'approval-denied': { say: 'Delete record 7', approve: { approved: false, reason: 'not now' } },
  // Client code that changes the call it is asked to approve (record 7 to
  // record 8) before the user approves it: the server must refuse.
  'approval-tampered': {
    say: 'Delete record 7',
    approve: { approved: true },
    tamper: part => ({ ...part, input: { ...part.input, id: 8 } }),
  },
  error: { say: 'Fail please' },
  // A sub-agent (an agent tool) at work: its data part while the call runs.
  subagent: { say: 'Weather in Oslo?' },
  // A sub-agent's call that needs approval, approved in the page.
  'subagent-approval': { say: 'Weather in Oslo?', approve: { approved: true } },
  // A sub-agent's client tool: the page runs getLocation for the sub-agent.
  'subagent-client-tool': {
    say: 'Where am I?',
    clientTools: { getLocation: input => ({ city: 'Berlin', precision: input.precision }) },
  },
  // The page goes away while the server waits in a tool (the chat's stop
  // aborts its fetch), then reloads: it loads the stored chat (GET
  // /api/chats/{id}) and resumes the stream, as useChat({resume: true})
  // does on mount. The server must go on without it and replay the run.
  resume: { say: 'Weather in Oslo, then wait', resume: true },
  // The same during a continuation (after an approval), whose message the
  // reloaded page already has from the store.
  'resume-continuation': { say: 'Delete record 7', approve: { approved: true }, resume: true },
};

// The model context of the assistant-ui page: a system prompt, call
// settings and the frontend tool getLocation (a plain JSON Schema, which
// toToolsJSONSchema passes through; a "frontend" tool is only sent when it
// has an execute). AssistantChatTransport turns it into the body's system,
// callSettings and tools. The chat answers the call in onToolCall, like
// every scenario.
const assistantUIContext = {
  system: 'You are a test assistant.',
  callSettings: { temperature: 0.25 },
  tools: {
    getLocation: {
      type: 'frontend',
      description: "The user's location.",
      parameters: {
        type: 'object',
        properties: { precision: { type: 'string', enum: ['city', 'country'] } },
        required: ['precision'],
      },
      execute: async input => ({ city: 'Berlin', precision: input.precision }),
    },
  },
};

// assistantUITransport returns the real AssistantChatTransport wired to a
// stub of the runtime it reads (thread.getModelContext, threads.mainItem).
function assistantUITransport(init) {
  const transport = new AssistantChatTransport(init);
  transport.setRuntime({
    thread: { getModelContext: () => assistantUIContext },
    threads: { mainItem: undefined },
  });
  return transport;
}

// sseData returns the data of every complete event in text (the rest is
// kept for the next call), joining multi-line data the way
// eventsource-parser does. It is a plain reader for the record; the chat
// parses the other branch of the tee with the real parser.
function sseData(buffer) {
  const events = [];
  const blocks = buffer.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop();
  for (const block of blocks) {
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push(data.join('\n'));
  }
  return { events, rest };
}

async function main() {
  const [name, url] = process.argv.slice(2);
  const sc = scenarios[name];
  if (!sc || !url) {
    process.stderr.write(`usage: node harness.mjs <${Object.keys(scenarios).join('|')}> <url>\n`);
    process.exit(2);
  }

  const requests = [];
  const chunks = [];
  const invalidChunks = [];
  const toolCalls = [];
  const pending = new Set(); // recorder promises of responses still streaming

  async function record(body) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      const { events, rest } = sseData(buffer);
      buffer = rest;
      for (const data of events) {
        if (data === '[DONE]') continue;
        chunks.push(data);
        const res = await safeParseJSON({ text: data, schema: uiMessageChunkSchema });
        if (!res.success) invalidChunks.push({ data, error: String(res.error?.message ?? res.error).slice(0, 600) });
      }
    }
  }

  const recordingFetch = async (input, init) => {
    if (init?.body) requests.push(JSON.parse(init.body));
    const res = await fetch(input, init);
    if (!res.ok || !res.body) return res;
    const [mine, theirs] = res.body.tee();
    const p = record(mine).catch(err => {
      // A page that goes away aborts its fetch; that is not a bad chunk.
      if (err?.name !== 'AbortError') invalidChunks.push({ data: '', error: 'reading the body: ' + err });
    });
    pending.add(p);
    p.finally(() => pending.delete(p));
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };

  const init = { api: url, fetch: recordingFetch };
  const transport = sc.assistantUI ? assistantUITransport(init) : new DefaultChatTransport(init);

  const errors = [];
  const views = [];
  const newChat = (transport, messages) => new Chat({
    id: 'chat-' + name,
    messages,
    transport,
    sendAutomaticallyWhen: async ({ messages }) =>
      (await lastAssistantMessageIsCompleteWithToolCalls({ messages })) ||
      (await lastAssistantMessageIsCompleteWithApprovalResponses({ messages })),
    onError: err => errors.push(String(err?.message ?? err)),
    onToolCall: ({ toolCall }) => {
      toolCalls.push(toolCall);
      if (toolCall.dynamic) return;
      const fn = sc.clientTools?.[toolCall.toolName];
      if (!fn) return; // a server tool, or one awaiting approval
      let output;
      try {
        output = fn(toolCall.input);
      } catch (err) {
        chat.addToolOutput({ state: 'output-error', tool: toolCall.toolName, toolCallId: toolCall.toolCallId, errorText: String(err) });
        return;
      }
      // No await, as the docs say: awaiting inside onToolCall deadlocks.
      chat.addToolOutput({ tool: toolCall.toolName, toolCallId: toolCall.toolCallId, output });
    },
  });
  let chat = newChat(transport);

  // Record what a UI would show of the tool parts (and of sub-agents' data
  // parts), each time it changes.
  function recordViews() {
    const view = chat.messages
      .flatMap(m => m.parts)
      .filter(p => p.type.startsWith('tool-') || p.type === 'data-subagent')
      .map(p => p.type === 'data-subagent'
        ? `${p.type} ${p.id} ${p.data.agent} ${p.data.state} [${p.data.parts.map(x => x.type === 'tool' ? `${x.toolName}(${x.state})` : `${x.type}:${x.text}`).join(', ')}]`
        : `${p.type} ${p.state}${p.preliminary ? ' preliminary' : ''} ${JSON.stringify(p.output ?? null)}`)
      .join(' | ');
    if (view && views.at(-1) !== view) views.push(view);
  }
  chat['~registerMessagesCallback'](recordViews);

  if (sc.resume) {
    await resumeScenario();
    return;
  }

  for (const text of [sc.say].flat()) {
    // assistant-ui sends its run config as the request metadata ({} from
    // the composer).
    await chat.sendMessage({ text }, sc.assistantUI ? { metadata: {} } : undefined);
    await settle(chat, pending);
  }

  if (sc.approve) {
    if (sc.tamper) {
      chat.messages = chat.messages.map(m => ({
        ...m,
        parts: m.parts.map(p => (p.state === 'approval-requested' ? sc.tamper(p) : p)),
      }));
    }
    const parts = chat.messages.at(-1)?.parts ?? [];
    const asked = parts.filter(p => p.state === 'approval-requested');
    for (const p of asked) {
      await chat.addToolApprovalResponse({ id: p.approval.id, ...sc.approve });
    }
    await settle(chat, pending);
  }

  print();

  // resumeScenario plays a page that goes away mid-answer and reloads.
  async function resumeScenario() {
    const waiting = () => chunks.some(c => c.includes('"tool-input-available"') && c.includes('wait_for_it'));
    const first = (async () => {
      await chat.sendMessage({ text: sc.say });
      if (sc.approve) {
        await settle(chat, pending);
        for (const p of chat.messages.at(-1).parts.filter(p => p.state === 'approval-requested')) {
          await chat.addToolApprovalResponse({ id: p.approval.id, ...sc.approve });
        }
      }
    })();
    const deadline = Date.now() + 20000;
    while (!waiting()) {
      if (Date.now() > deadline) throw new Error('the server never reached the waiting tool');
      await new Promise(r => setTimeout(r, 10));
    }
    const firstMessages = structuredClone(chat.messages);
    await chat.stop(); // the page goes away: its fetch is aborted
    await first.catch(() => {});

    // The page reloads: it loads the stored chat, then resumes its stream.
    const res = await fetch(url.replace(/\/chat$/, '/chats/') + encodeURIComponent(chat.id));
    const view = await res.json();
    chat = newChat(new DefaultChatTransport(init), view.messages);
    chat['~registerMessagesCallback'](recordViews);
    await chat.resumeStream();
    await settle(chat, pending);
    print({ firstMessages, reloaded: view });
  }

  function print(extra) {
    const out = {
      scenario: name,
      status: chat.status,
      error: chat.error ? String(chat.error.message) : '',
      onError: errors,
      messages: chat.messages,
      requests,
      chunks,
      invalidChunks,
      toolCalls,
      views,
      ...extra,
    };
    process.stdout.write(JSON.stringify(out) + '\n');
  }
}

// settle waits until the chat is neither submitted nor streaming, no
// response is still being recorded, and that stays so for a few ticks (an
// automatic re-send is started without being awaited after
// addToolApprovalResponse). It gives up after 20s.
async function settle(chat, pending) {
  const deadline = Date.now() + 20000;
  let quiet = 0;
  while (quiet < 5) {
    if (Date.now() > deadline) throw new Error(`chat did not settle: status ${chat.status}`);
    await new Promise(r => setTimeout(r, 20));
    const busy = chat.status === 'submitted' || chat.status === 'streaming' || pending.size > 0;
    quiet = busy ? 0 : quiet + 1;
  }
}

main().catch(err => {
  process.stderr.write('harness: ' + (err?.stack ?? err) + '\n');
  process.exit(2);
});
