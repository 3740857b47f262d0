// Package mcptools offers the tools of Model Context Protocol servers to an
// [agentloop.Agent]: each MCP tool becomes an ordinary [*agentloop.Tool],
// with the server's input schema (arguments are validated like any other
// tool's), and its calls go to the server.
//
// It is built on the official MCP SDK, github.com/modelcontextprotocol/go-sdk.
// A [Server] is one MCP server; a [Dialer] says how to reach it: [Stdio] or
// [Command] start a program and speak over its standard input and output,
// [HTTP] speaks streamable HTTP (with a hook to set headers on each request),
// [InMemory] connects to an mcp.Server in the same process (for tests).
//
//	srv, err := mcptools.NewServer(mcptools.Stdio("my-mcp-server"), mcptools.ServerOptions{Prefix: "fs_"})
//	…
//	defer srv.Close()
//	tools, err := srv.Tools(ctx)
//	…
//	for item, err := range agent.Stream(ctx, history, &agentloop.RunOptions{Tools: tools}) { … }
//
// # What the model sees
//
// A result's structuredContent, as JSON, when it has one; else its content
// blocks in order, one per line: text as is, images, audio, links and
// binary resources described in brackets ("[image: image/png, 1234 bytes]"),
// embedded text resources under a bracketed header. Content longer than
// [ServerOptions.MaxResultBytes] is cut and ends with a line saying so. A
// result marked isError becomes an error result with that content
// ([ToolError]); a protocol error or a lost connection becomes an error
// result that says what happened.
//
// # Decisions
//
//   - Lazy connection. NewServer does not connect; the first use does
//     (Tools, a tool call, Session). When the session ends, the next use
//     connects again, once per use: a dead server costs each call one
//     attempt, never a retry loop.
//   - No silent repeats. A tool call in flight when the connection broke is
//     not made again (the server may have acted on it); the model gets an
//     error result and the next call reconnects. Only calls the server
//     provably did not run (it no longer knew the session) and tool
//     listings (no side effects) are retried, once.
//   - Tool lists are cached until the server says they changed
//     (notifications/tools/list_changed) or the session is replaced; the
//     caller asks for them before each run ([Server.Tools]) and passes them
//     with [agentloop.RunOptions.Tools], because an Agent's own Tools must not
//     change while it runs.
//   - Names. A tool is offered as ServerOptions.Prefix plus its MCP name,
//     with characters providers reject ('.', '/', …) turned into '_', and
//     at most [MaxNameLen] characters. Two tools that end up with one name
//     are an error, never a silent shadowing ([Tools] checks across
//     servers).
//   - Progress. Every call carries a progress token; each
//     notifications/progress becomes an [agentloop.ToolProgress] item
//     through [agentloop.ReportProgress] (so aisdk streams it as
//     preliminary tool output), formatted by [ServerOptions.FormatProgress].
//     Notifications are queued per call and reported from the call's own
//     goroutine, so a slow consumer never stalls the session.
//   - Timeouts. [ServerOptions.Timeout] bounds the wait for the server and
//     is restarted by each progress notification, so long calls that report
//     progress live on; [ServerOptions.MaxTimeout] is a hard bound (the
//     tools' [agentloop.Tool.Timeout]). A timed-out call matches
//     [agentloop.ErrToolTimeout].
//   - Cancellation. A call runs with the loop's context: when the run is
//     cancelled or the call times out, the MCP SDK sends
//     notifications/cancelled for the request and the call returns at once.
//   - Approval is a policy over the server's tool descriptions
//     ([ServerOptions.NeedsApproval], [UnlessReadOnly]), so that a server's
//     writing tools can wait for a human while its reading tools run.
//   - The client advertises no capabilities (no roots, sampling or
//     elicitation): it only calls tools. [Server.Session] gives access to
//     the rest of the protocol.
//   - Schemas are passed on as the server wrote them; they must be JSON
//     Schema objects that compile (draft 2020-12 by default, or draft-07
//     when their "$schema" says so; see [agentloop.NewRawTool]). A tool
//     whose schema does not compile makes [Server.Tools] fail with an
//     error naming it; leave it out with [ServerOptions.Filter].
package mcptools
