package ctxwindow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/ctxwindow"
	"github.com/agentloop/agentloop/simtest"
	"github.com/agentloop/agentloop/store"
	"github.com/agentloop/agentloop/store/memstore"
)

// longChat is 30 questions with long answers, then a new question.
func longChat() agentloop.History {
	var h agentloop.History
	for i := 1; i <= 30; i++ {
		h = append(h,
			agentloop.UserMessage(fmt.Sprintf("Question %d?", i)),
			agentloop.Message{Role: agentloop.RoleAssistant, Parts: []agentloop.Part{agentloop.TextPart(fmt.Sprintf("Answer %d: %s", i, strings.Repeat("because ", 50)))}},
		)
	}
	return append(h, agentloop.UserMessage("And the last question?"))
}

// A Manager keeps a long conversation within a small context window: the
// model gets the first question, a note where turns were left out, and the
// newest turns, while the history keeps everything.
func Example() {
	mgr, err := ctxwindow.New(ctxwindow.Config{
		ContextWindow: 2000, // tokens
		OutputReserve: 500,
		OnReport: func(_ context.Context, r ctxwindow.Report) {
			fmt.Printf("sent %d of %d messages, about %d tokens (budget %d)\n", r.Sent, r.Messages, r.After, r.Budget)
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(fmt.Sprintf("I got %q, then %q.", req.Messages[0].Text(), req.Messages[1].Text()))}, nil
	})
	agent := &agentloop.Agent{Model: model, Hooks: mgr.Hooks()}

	last, err := agentloop.Drain(agent.Stream(context.Background(), longChat(), nil))
	if err != nil {
		fmt.Println(err)
		return
	}
	final := last.(agentloop.Final)
	fmt.Println(final.Text)
	fmt.Println(len(final.History), "messages in the history")
	// Output:
	// sent 27 of 61 messages, about 1411 tokens (budget 1500)
	// I got "Question 1?", then "[35 earlier messages of this conversation are left out here to fit the context window.]".
	// 62 messages in the history
}

// Summarize has a model summarize the older turns. The summary is kept in
// the store under the conversation's id, where the app can read it, and
// later runs reuse it instead of summarizing again.
func ExampleSummarize() {
	summarizer := simtest.NewFuncModel(func(*agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text("The user asked many questions; each was answered at length.")}, nil
	})
	docs := memstore.New(memstore.Options{})
	mgr, err := ctxwindow.New(ctxwindow.Config{
		ContextWindow: 2000,
		OutputReserve: 500,
		Strategies:    []ctxwindow.Strategy{ctxwindow.Summarize{Model: summarizer, MaxTokens: 200}, ctxwindow.SlidingWindow{}},
		Docs:          docs, // or the app's sqlitestore, pgstore
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	model := simtest.NewFuncModel(func(req *agentloop.Request) ([]simtest.Step, error) {
		return []simtest.Step{simtest.Text(req.Messages[1].Text())}, nil
	})
	agent := &agentloop.Agent{Model: model, Hooks: mgr.Hooks()}

	for range 2 { // two runs of one conversation
		text, err := agentloop.Text(agent.Stream(context.Background(), longChat(), &agentloop.RunOptions{ConversationID: "chat-42"}))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(text)
	}
	var s ctxwindow.Summary
	if doc, err := store.GetConversationDoc(context.Background(), docs, "chat-42", ctxwindow.SummaryDoc); err == nil {
		_ = json.Unmarshal(doc.Data, &s)
	}
	fmt.Printf("summary of messages %d to %d, made once, in %d summarizer calls\n", s.From, s.Through-1, summarizer.Calls())
	// Output:
	// [Summary of the earlier part of this conversation (47 messages, left out here to fit the context window):]
	//
	// The user asked many questions; each was answered at length.
	// [Summary of the earlier part of this conversation (47 messages, left out here to fit the context window):]
	//
	// The user asked many questions; each was answered at length.
	// summary of messages 1 to 47, made once, in 2 summarizer calls
}

// LargeResults sends a huge tool result as a preview; the read tool lets
// the model read the rest.
func ExampleManager_ReadResultTool() {
	mgr, err := ctxwindow.New(ctxwindow.Config{
		ContextWindow: 100_000,
		LargeResults:  &ctxwindow.LargeResults{Limit: 4000, Preview: 300},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	logs, _ := agentloop.NewTool("logs", "The server's logs.", func(context.Context, struct{}) (string, error) {
		return strings.Repeat("GET /index.html 200\n", 2000) + "PANIC: disk full\n", nil
	})
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "logs", nil)}},
		simtest.Turn{ReplyFunc: func(req *agentloop.Request) ([]simtest.Step, error) {
			sent := req.Messages[len(req.Messages)-1].Parts[0].ToolResult.Content
			marker := sent[strings.Index(sent, "[…") : strings.Index(sent, "…]")+len("…]")]
			fmt.Printf("the model sees %d bytes, with %s\n", len(sent), marker)
			return []simtest.Step{simtest.Call("", ctxwindow.ReadResultToolName, map[string]any{"callId": "call_1", "offset": 39_990})}, nil
		}},
		simtest.Turn{ReplyFunc: func(req *agentloop.Request) ([]simtest.Step, error) {
			fmt.Printf("read: %q\n", req.Messages[len(req.Messages)-1].Parts[0].ToolResult.Content)
			return []simtest.Step{simtest.Text("The disk is full.")}, nil
		}},
	)
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{logs, mgr.ReadResultTool()}, Hooks: mgr.Hooks()}
	text, err := agentloop.Text(agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Why did the server stop?")}, nil))
	fmt.Println(text, err)
	// Output:
	// the model sees 457 bytes, with [… 39717 bytes left out here to save context: bytes 200 to 39917 of 40017. To read them, call read_tool_result with {"callId":"call_1","offset":200} …]
	// read: ".html 200\nPANIC: disk full\n"
	// The disk is full. <nil>
}
