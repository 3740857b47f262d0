package aisdk_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/aisdk"
	"github.com/agentloop/agentloop/simtest"
)

// A chat route served by the Handler, as useChat would POST to it: the
// model calls a server tool, then answers.
func Example() {
	type addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	add, _ := agentloop.NewTool("add", "Add two numbers.", func(ctx context.Context, in addArgs) (map[string]float64, error) {
		return map[string]float64{"sum": in.A + in.B}, nil
	})
	model := simtest.NewModel(
		simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "add", map[string]int{"a": 2, "b": 3})}},
		simtest.Turn{Reply: []simtest.Step{simtest.Text("2 + 3 = 5.")}},
	)
	handler := &aisdk.Handler{
		Agent: &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{add}},
		// The key that signs what the server decided (in production: 32
		// random bytes from your secret store; nil makes one per process).
		Secret:       []byte("an example key of 32 bytes or more"),
		NewMessageID: func() string { return "msg-1" },
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/chat", handler)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	body := `{"id":"chat-1","trigger":"submit-message",
	  "messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"What is 2 + 3?"}]}]}`
	resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	fmt.Println(resp.Header.Get("Content-Type"))
	sse, _ := io.ReadAll(resp.Body)
	fmt.Print(strings.ReplaceAll(string(sse), "\n\n", "\n"))
	// Output:
	// text/event-stream
	// data: {"type":"start","messageId":"msg-1"}
	// data: {"type":"start-step"}
	// data: {"type":"tool-input-start","toolCallId":"call_1","toolName":"add"}
	// data: {"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"{\"a\":"}
	// data: {"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"2,\"b\""}
	// data: {"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":":3}"}
	// data: {"type":"tool-input-available","toolCallId":"call_1","toolName":"add","input":{"a":2,"b":3},"providerMetadata":{"agentloop":{"sig":"OnQ8IOQlhybsN1lJHwYyaW8uP_vvPZQRLizsEgKo5Pk"}}}
	// data: {"type":"tool-output-available","toolCallId":"call_1","output":{"sum":5},"providerMetadata":{"agentloop":{"sig":"v9QWBaJ65X_nQ4vGj9yLW1m1FfWq4dEtydTwzJNVhQM"}}}
	// data: {"type":"finish-step"}
	// data: {"type":"start-step"}
	// data: {"type":"text-start","id":"text-1"}
	// data: {"type":"text-delta","id":"text-1","delta":"2 "}
	// data: {"type":"text-delta","id":"text-1","delta":"+ "}
	// data: {"type":"text-delta","id":"text-1","delta":"3 "}
	// data: {"type":"text-delta","id":"text-1","delta":"= "}
	// data: {"type":"text-delta","id":"text-1","delta":"5."}
	// data: {"type":"text-end","id":"text-1","providerMetadata":{"agentloop":{"sig":"TCw6Mgzr2a0qsGbsK7JxGieZ5elW6bPFAyoMNeuo_bE"}}}
	// data: {"type":"finish-step"}
	// data: {"type":"finish","finishReason":"stop"}
	// data: [DONE]
}

// The Mapper and Writer without HTTP: a run that pauses for a client tool
// becomes a response that ends with finish reason "tool-calls".
func ExampleMapper() {
	form, _ := agentloop.NewClientTool("create_record", "Show a form to the user.", nil)
	model := simtest.NewModel(simtest.Turn{Reply: []simtest.Step{simtest.Call("call_1", "create_record", map[string]string{"name": "Ada"})}})
	agent := &agentloop.Agent{Model: model, Tools: []*agentloop.Tool{form}}

	w := aisdk.NewWriter(os.Stdout)
	m := aisdk.NewMapper("msg-1")
	var chunks []aisdk.Chunk
	for item, err := range agent.Stream(context.Background(), agentloop.History{agentloop.UserMessage("Add Ada")}, nil) {
		chunks = m.Map(chunks, item, err)
	}
	for _, c := range m.End(chunks) {
		_ = w.WriteChunk(c)
	}
	_ = w.Close() // writes data: [DONE] and flushes everything
	// Output:
	// data: {"type":"start","messageId":"msg-1"}
	//
	// data: {"type":"start-step"}
	//
	// data: {"type":"tool-input-start","toolCallId":"call_1","toolName":"create_record"}
	//
	// data: {"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"{\"nam"}
	//
	// data: {"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"e\":\"A"}
	//
	// data: {"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"da\"}"}
	//
	// data: {"type":"tool-input-available","toolCallId":"call_1","toolName":"create_record","input":{"name":"Ada"}}
	//
	// data: {"type":"finish-step"}
	//
	// data: {"type":"finish","finishReason":"tool-calls"}
	//
	// data: [DONE]
}
